// Helm's uninstall for a deleted HelmRelease: pre-delete hooks, the release's objects deleted
// (the inventory, as prune deletes them: only those still carrying this HelmRelease's labels), post-delete
// hooks, then the records removed (or kept, marked uninstalled, with keepHistory) and the
// HelmChart the operator made for it deleted.
import { type HelmRelease, type ResourceInventory, SOURCE_API_VERSION } from '@mooring/api';
import { helmTime, type ReleaseRecord, ReleaseStore } from '@mooring/helm';
import { ApiError, type Impersonation, type KubeClient } from '@mooring/runtime';
import { fromEntry } from '../inventory.ts';
import { type PruneResult, pruneObjects } from '../prune.ts';
import { HELM_OWNER_LABELS } from './apply-release.ts';
import type { runHooks } from './hooks.ts';
import { helmChartNameOf, placementOf } from './release-names.ts';

const PROPAGATION = { background: 'Background', foreground: 'Foreground', orphan: 'Orphan' } as const;

/** Deletes the objects `inventory` lists, per `uninstall.deletionPropagation`. */
export function deleteReleaseObjects(
  obj: HelmRelease,
  target: KubeClient,
  inventory: ResourceInventory | undefined,
  impersonate: Impersonation | undefined,
): Promise<PruneResult> {
  const owner = { name: obj.metadata.name ?? '', namespace: obj.metadata.namespace ?? 'default' };
  return pruneObjects(target, (inventory?.entries ?? []).map(fromEntry), owner, impersonate, {
    labels: HELM_OWNER_LABELS,
    propagationPolicy: PROPAGATION[obj.spec.uninstall?.deletionPropagation ?? 'background'],
  });
}

export interface UninstallOptions {
  client: KubeClient;
  target: KubeClient;
  impersonate: Impersonation | undefined;
  /** Who deletes the HelmChart made for spec.chart, on this cluster. */
  localImpersonate: Impersonation | undefined;
  runHooks: typeof runHooks;
  signal: AbortSignal;
  timeoutMs: number;
  now: () => Date;
}

/** Uninstalls the release; returns what could not be done (the finalizer stays and it is retried). */
export async function uninstallRelease(obj: HelmRelease, opts: UninstallOptions): Promise<string[]> {
  const placement = placementOf(obj);
  const problems: string[] = [];
  const store = new ReleaseStore(opts.target, {
    namespace: obj.status?.storageNamespace ?? placement.storageNamespace,
    impersonate: opts.impersonate,
    now: opts.now,
  });
  const history = await store.history(placement.releaseName);
  const current: ReleaseRecord | undefined =
    history.filter((r) => r.info.status === 'deployed').at(-1) ?? history.at(-1);
  const hooks = obj.spec.uninstall?.disableHooks ? [] : (current?.hooks ?? []);
  const hookOpts = {
    client: opts.target,
    ...(opts.impersonate ? { impersonate: opts.impersonate } : {}),
    namespace: placement.targetNamespace,
    timeoutMs: opts.timeoutMs,
    signal: opts.signal,
    labels: {},
    annotations: {},
  };
  if (hooks.length) {
    const pre = await opts.runHooks(hooks, 'pre-delete', hookOpts);
    if (!pre.ok)
      return [`pre-delete hook ${pre.failed.kind}/${pre.failed.name} failed: ${pre.failed.message}`];
  }
  const deleted = await deleteReleaseObjects(obj, opts.target, obj.status?.inventory, opts.impersonate);
  problems.push(...deleted.failed.map((f) => f.message));
  if (problems.length) return problems;
  if (hooks.length) {
    const post = await opts.runHooks(hooks, 'post-delete', hookOpts);
    if (!post.ok)
      problems.push(
        `post-delete hook ${post.failed.kind}/${post.failed.name} failed: ${post.failed.message}`,
      );
  }
  if (obj.spec.uninstall?.keepHistory) {
    if (current)
      await store.update({
        ...current,
        info: {
          ...current.info,
          status: 'uninstalled',
          deleted: helmTime(opts.now()),
          description: 'Uninstallation complete',
        },
      });
  } else {
    for (const r of history) await store.remove(placement.releaseName, r.version);
  }
  const chart = helmChartNameOf(obj);
  if (chart) {
    try {
      await opts.client.delete(
        { apiVersion: SOURCE_API_VERSION, kind: 'HelmChart', ...chart },
        { impersonate: opts.localImpersonate },
      );
    } catch (err) {
      if (!(err instanceof ApiError && err.isNotFound))
        problems.push(`HelmChart ${chart.namespace}/${chart.name}: ${(err as Error).message}`);
    }
  }
  return problems;
}
