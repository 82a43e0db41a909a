import { type Artifact, ConditionType, Reason } from '@mooring/api';
import type { ArtifactStorage } from '@mooring/artifact';
import type { ReconcileContext, ReconcileResult } from '@mooring/runtime';
import { markArtifactCurrent } from './source-conditions.ts';

/**
 * The status's artifact if its file is still in storage with the digest it claims; otherwise
 * undefined, with ArtifactInStorage False, so the reconcile builds it again.
 */
export async function verifiedArtifact(
  storage: ArtifactStorage,
  artifact: Artifact | undefined,
  ctx: ReconcileContext,
): Promise<Artifact | undefined> {
  if (!artifact) return undefined;
  if (await storage.verify({ path: artifact.path, digest: artifact.digest ?? '' })) return artifact;
  ctx.log.warn({ path: artifact.path }, 'artifact missing or corrupt in storage; rebuilding');
  ctx.setCondition(ConditionType.ArtifactInStorage, 'False', Reason.Progressing, 'artifact not in storage');
  return undefined;
}

/**
 * The no-op ending: the stored artifact already holds the wanted revision. Only the advertised
 * URL may change (when `--storage-adv-addr` moved); the artifact is returned with it.
 */
export function keepArtifact(
  storage: ArtifactStorage,
  current: Artifact,
  ctx: ReconcileContext,
): { artifact: Artifact; result: ReconcileResult } {
  const url = storage.urlFor(current.path);
  markArtifactCurrent(ctx, current.revision);
  return {
    artifact: current.url === url ? current : { ...current, url },
    result: { message: `stored artifact for revision '${current.revision}'`, revision: current.revision },
  };
}
