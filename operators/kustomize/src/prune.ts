import { KUSTOMIZE_NAME_LABEL, KUSTOMIZE_NAMESPACE_LABEL } from '@mooring/api';
import { ApiError, type Impersonation, type KubeClient } from '@mooring/runtime';
import { type Manifest, objectPolicy } from './apply/object-policy.ts';
import { type ObjectRef, refToString } from './inventory.ts';

export interface PruneResult {
  deleted: ObjectRef[];
  /** Objects whose deletion failed; they stay in the inventory so the next run retries. */
  failed: { ref: ObjectRef; message: string }[];
}

/** Which owner labels mark an object as the owner's, and how its dependents go; a Kustomization's by default. */
export interface PruneOptions {
  labels?: { name: string; namespace: string };
  propagationPolicy?: 'Background' | 'Foreground' | 'Orphan';
  /** Only find what would be deleted (in `deleted`), for the deletion budget; nothing is deleted. */
  dryRun?: boolean;
}

const KUSTOMIZATION_OWNER = { name: KUSTOMIZE_NAME_LABEL, namespace: KUSTOMIZE_NAMESPACE_LABEL };

/**
 * Deletes objects that left the source. Only objects that still carry this owner's labels
 * (a Kustomization's, or a HelmRelease's with `opts.labels`) are touched (someone may have adopted
 * one since), and never those marked `prune: disabled`, `reconcile: disabled` or `ssa: Ignore`.
 */
export async function pruneObjects(
  client: KubeClient,
  refs: ObjectRef[],
  owner: { name: string; namespace: string },
  impersonate: Impersonation | undefined,
  opts: PruneOptions = {},
): Promise<PruneResult> {
  const ownerLabels = opts.labels ?? KUSTOMIZATION_OWNER;
  const result: PruneResult = { deleted: [], failed: [] };
  for (const ref of refs) {
    const key = {
      apiVersion: ref.apiVersion,
      kind: ref.kind,
      namespace: ref.namespace || undefined,
      name: ref.name,
    };
    try {
      let live: Manifest;
      try {
        live = await client.get<Manifest & { metadata: { name: string } }>(key, impersonate);
      } catch (err) {
        if (err instanceof ApiError && err.isNotFound) continue;
        throw err;
      }
      const labels = live.metadata.labels ?? {};
      if (labels[ownerLabels.name] !== owner.name || labels[ownerLabels.namespace] !== owner.namespace)
        continue;
      const policy = objectPolicy(live);
      if (!policy.prune || !policy.reconcile) continue;
      if (live.metadata.deletionTimestamp) continue;
      if (!opts.dryRun)
        await client.delete(key, { propagationPolicy: opts.propagationPolicy ?? 'Background', impersonate });
      result.deleted.push(ref);
    } catch (err) {
      result.failed.push({ ref, message: `${refToString(ref)}: ${(err as Error).message}` });
    }
  }
  return result;
}

/** Waits until none of `refs` exists any more, for `deletionPolicy: WaitForTermination`. */
export async function waitForTermination(
  client: KubeClient,
  refs: ObjectRef[],
  timeoutMs: number,
  impersonate: Impersonation | undefined,
): Promise<ObjectRef[]> {
  const deadline = Date.now() + timeoutMs;
  let remaining = refs;
  while (remaining.length && Date.now() < deadline) {
    const still: ObjectRef[] = [];
    for (const ref of remaining) {
      try {
        await client.get(
          {
            apiVersion: ref.apiVersion,
            kind: ref.kind,
            namespace: ref.namespace || undefined,
            name: ref.name,
          },
          impersonate,
        );
        still.push(ref);
      } catch (err) {
        if (!(err instanceof ApiError && err.isNotFound)) still.push(ref);
      }
    }
    remaining = still;
    if (remaining.length) await new Promise((r) => setTimeout(r, 500));
  }
  return remaining;
}
