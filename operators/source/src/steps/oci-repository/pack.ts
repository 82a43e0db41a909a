import { join } from 'node:path';
import { Reason } from '@mooring/api';
import {
  ArtifactTooLargeError,
  extractTarGz,
  type StoredArtifact,
  UnsafeArchiveError,
} from '@mooring/artifact';
import { RetryableError } from '@mooring/runtime';
import { loadExclusionFilter } from '../../ignore-rules.ts';
import type { OciRepositoryRun } from '../../oci-repository-run.ts';
import { markFetchFailed } from '../../source-conditions.ts';
import { need } from '../../source-run.ts';
import { PackedLayers } from './packed-layers.ts';

/** The layer extracted (within the limits), filtered by the ignore rules and packed again. */
async function extractAndPack(run: OciRepositoryRun, blob: string): Promise<StoredArtifact> {
  const { deps, ctx } = run;
  const tree = join(need(run.scratch, 'the scratch folder'), 'tree');
  try {
    await extractTarGz(blob, tree, {
      maxTotalBytes: deps.limits.maxTotalBytes,
      maxFileBytes: deps.limits.maxFileBytes,
    });
    const filter = await loadExclusionFilter(tree, run.obj.spec.ignore);
    return await deps.storage.archive(run.storageRef, tree, { filter, ...deps.limits });
  } catch (err) {
    if (err instanceof UnsafeArchiveError || err instanceof ArtifactTooLargeError) {
      markFetchFailed(ctx, Reason.OCIArtifactLayerOperationFailed, err.message);
      throw new RetryableError(Reason.OCIArtifactLayerOperationFailed, err.message);
    }
    throw err;
  }
}

/** What the record step writes for a stored artifact of this run's revision. */
function packedOf(run: OciRepositoryRun, stored: StoredArtifact): NonNullable<OciRepositoryRun['packed']> {
  const { obj } = run;
  const revision = need(run.revision, 'the upstream revision');
  const { annotations } = need(run.resolved, 'the manifest').manifest;
  return {
    artifact: { ...stored, revision, ...(Object.keys(annotations).length ? { metadata: annotations } : {}) },
    observed: { observedIgnore: obj.spec.ignore, observedLayerSelector: obj.spec.layerSelector },
    event: `stored artifact with revision '${revision}' from '${obj.spec.url}'`,
  };
}

/**
 * An artifact this process already built from the same layer, for a source of the same
 * repository in the same namespace (packed-layers.ts), is copied in storage: nothing is pulled or
 * packed. A copy that no longer matches its digest is forgotten and the layer pulled as usual.
 */
export async function reusePackedLayer(run: OciRepositoryRun): Promise<undefined> {
  const packedLayers = run.deps.packedLayers;
  if (!packedLayers) return undefined;
  const key = PackedLayers.keyOf(run.obj, need(run.layer, 'the layer'));
  const from = packedLayers.get(key);
  if (!from) return undefined;
  const stored = await run.deps.storage.storeCopy(run.storageRef, from);
  if (!stored) {
    packedLayers.delete(key);
    return undefined;
  }
  run.packed = packedOf(run, stored);
  return undefined;
}

/** Stores the layer as the artifact: as-is for `layerSelector.operation: copy`, else extracted and filtered. */
export async function packArtifact(run: OciRepositoryRun): Promise<undefined> {
  const blob = need(run.blob, 'the layer blob');
  const stored =
    run.obj.spec.layerSelector?.operation === 'copy'
      ? await run.deps.storage.storeFile(run.storageRef, blob)
      : await extractAndPack(run, blob);
  run.packed = packedOf(run, stored);
  run.deps.packedLayers?.set(PackedLayers.keyOf(run.obj, need(run.layer, 'the layer')), stored);
  return undefined;
}

/** `status.url` (Flux's, from before `status.artifact.url`): where the current artifact is downloaded. */
export function advertiseUrl(run: OciRepositoryRun): undefined {
  run.status.url = need(run.status.artifact, 'the artifact').url;
  return undefined;
}
