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

/** Stores the layer as the artifact: as-is for `layerSelector.operation: copy`, else extracted and filtered. */
export async function packArtifact(run: OciRepositoryRun): Promise<undefined> {
  const { obj } = run;
  const blob = need(run.blob, 'the layer blob');
  const revision = need(run.revision, 'the upstream revision');
  const { annotations } = need(run.resolved, 'the manifest').manifest;
  const layerSelector = obj.spec.layerSelector;
  const stored =
    layerSelector?.operation === 'copy'
      ? await run.deps.storage.storeFile(run.storageRef, blob)
      : await extractAndPack(run, blob);
  run.packed = {
    artifact: { ...stored, revision, ...(Object.keys(annotations).length ? { metadata: annotations } : {}) },
    observed: { observedIgnore: obj.spec.ignore, observedLayerSelector: layerSelector },
    event: `stored artifact with revision '${revision}' from '${obj.spec.url}'`,
  };
  return undefined;
}

/** `status.url` (Flux's, from before `status.artifact.url`): where the current artifact is downloaded. */
export function advertiseUrl(run: OciRepositoryRun): undefined {
  run.status.url = need(run.status.artifact, 'the artifact').url;
  return undefined;
}
