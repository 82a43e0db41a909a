import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Reason } from '@mooring/api';
import { RetryableError, StalledError } from '@mooring/runtime';
import type { OciRepositoryRun } from '../../oci-repository-run.ts';
import { markFetchFailed } from '../../source-conditions.ts';
import { need } from '../../source-run.ts';
import { pullFailure } from './pull-failure.ts';

/** The layer `spec.layerSelector.mediaType` names (the first one by default), within the size limit. */
export function selectLayer(run: OciRepositoryRun): undefined {
  const { ctx, deps } = run;
  const mediaType = run.obj.spec.layerSelector?.mediaType;
  const revision = need(run.revision, 'the upstream revision');
  const layers = need(run.resolved, 'the manifest').manifest.manifest.layers;
  const layer = mediaType ? layers.find((l) => l.mediaType === mediaType) : layers[0];
  if (!layer) {
    const message = mediaType
      ? `no layer with media type '${mediaType}' in ${revision}`
      : `the manifest of ${revision} has no layers`;
    markFetchFailed(ctx, Reason.OCIArtifactLayerOperationFailed, message);
    throw new StalledError(Reason.OCIArtifactLayerOperationFailed, message);
  }
  if (layer.size > deps.limits.maxTotalBytes) {
    const message = `layer ${layer.digest} is ${layer.size} bytes, over the ${deps.limits.maxTotalBytes}-byte limit`;
    markFetchFailed(ctx, Reason.OCIArtifactLayerOperationFailed, message);
    throw new RetryableError(Reason.OCIArtifactLayerOperationFailed, message);
  }
  run.layer = layer;
  return undefined;
}

/** Downloads the layer into scratch, its digest verified as it streams. */
export async function pullLayer(run: OciRepositoryRun): Promise<undefined> {
  const registry = need(run.registry, 'the registry client');
  const layer = need(run.layer, 'the layer');
  run.scratch = await mkdtemp(join(tmpdir(), 'mooring-oci-'));
  const blob = join(run.scratch, 'layer.tar.gz');
  try {
    await registry.fetchBlob(need(run.target, 'the parsed URL'), layer, blob, {
      maxBytes: run.deps.limits.maxTotalBytes,
    });
  } catch (err) {
    pullFailure(run, err);
  }
  run.blob = blob;
  return undefined;
}
