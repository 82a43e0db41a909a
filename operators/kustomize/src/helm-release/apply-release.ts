// A release's objects onto the cluster through the same code as a Kustomization's: applySet in
// stages with the intent recorded in status.inventory before the first write, prune of what the
// previous inventory had and this release has not, and the kstatus health wait.
import {
  HELM_API_VERSION,
  HELM_NAME_LABEL,
  HELM_NAMESPACE_LABEL,
  type HelmRelease,
  Reason,
} from '@mooring/api';
import { RetryableError } from '@mooring/runtime';
import { type ApplyChange, ApplyError, applySet, type KnownVersion } from '../apply/apply-set.ts';
import { applyIgnoreRules } from '../apply/drift-ignore.ts';
import { stageZeroWaiter } from '../apply/stage-zero.ts';
import { waitForHealth } from '../health.ts';
import { evaluateHealth } from '../health-exprs.ts';
import {
  fromEntry,
  inventoryId,
  inventoryOf,
  type ObjectRef,
  refToString,
  staleEntries,
} from '../inventory.ts';
import { pruneObjects } from '../prune.ts';
import { Superseded } from '../superseded.ts';
import { type HelmReleaseRun, need, type ReleaseManifest } from './helm-release-run.ts';
import { withOwnership } from './render-release.ts';

export const HELM_OWNER_LABELS = { name: HELM_NAME_LABEL, namespace: HELM_NAMESPACE_LABEL };

/** One line per object an apply changed, for events. */
export function changeSummary(changes: ApplyChange[]): string {
  return changes
    .filter((c) => c.action !== 'unchanged' && c.action !== 'skipped')
    .map((c) => `${refToString(c.ref)} ${c.action}`)
    .join('\n');
}

/** The inventory the API server holds joins the cached one before anything is written (a lagging informer). */
async function joinStoredInventory(run: HelmReleaseRun): Promise<void> {
  const stored = await run.deps.client.getOrUndefined<HelmRelease & { metadata: { name: string } }>({
    apiVersion: HELM_API_VERSION,
    kind: 'HelmRelease',
    namespace: run.owner.namespace,
    name: run.owner.name,
  });
  const entries = new Map((run.previous?.entries ?? []).map((e) => [e.id, e]));
  for (const e of stored?.status?.inventory?.entries ?? []) if (!entries.has(e.id)) entries.set(e.id, e);
  run.previous = inventoryOf([...entries.values()].map(fromEntry));
}

/**
 * Server-side applies the release's objects (with Mooring's and Helm's ownership marks), then
 * prunes what the previous inventory lists and this release no longer has.
 */
export async function applyRelease(
  run: HelmReleaseRun,
  release: ReleaseManifest,
  opts: { force: boolean; what: string },
): Promise<ApplyChange[]> {
  const { obj, ctx, status, deps, memory, placement } = run;
  const target = need(run.target, 'the target cluster');
  const key = `${obj.metadata.namespace}/${obj.metadata.name}`;
  const known = memory.knownVersions.get(key) ?? new Map<string, KnownVersion>();
  memory.knownVersions.set(key, known);
  await joinStoredInventory(run);
  const intended = new Map((run.previous?.entries ?? []).map((e) => [e.id, fromEntry(e)]));
  const recordIntent = async (refs: ObjectRef[]) => {
    const fresh = refs.filter((r) => !intended.has(inventoryId(r)));
    if (fresh.length === 0) return;
    for (const r of fresh) intended.set(inventoryId(r), r);
    status.inventory = inventoryOf([...intended.values()]);
    await ctx.saveProgress(`${opts.what}: ${refs.length} objects to write`);
  };
  const ignore = obj.spec.driftDetection?.ignore;
  let changes: ApplyChange[];
  try {
    changes = await applySet(withOwnership(release.objects, run.owner, placement), {
      beforeApply: recordIntent,
      client: target,
      defaultNamespace: placement.targetNamespace,
      impersonate: run.impersonate,
      force: opts.force,
      concurrency: deps.concurrentApplies,
      signal: run.signal,
      knownVersions: known,
      adjust: ignore?.length ? (desired, live) => applyIgnoreRules(desired, live, ignore) : undefined,
      waitForStage0: stageZeroWaiter(target, run.signal),
    });
  } catch (err) {
    if (err instanceof ApplyError) throw new RetryableError(Reason.ReconciliationFailed, err.message);
    throw err;
  }
  const applied = changes.map((c) => c.ref);
  const inventory = inventoryOf(applied);
  const stale = staleEntries(run.previous, inventory);
  const pruned = await pruneObjects(target, stale, run.owner, run.impersonate, { labels: HELM_OWNER_LABELS });
  if (pruned.deleted.length)
    ctx.event('info', 'Progressing', pruned.deleted.map((r) => `${refToString(r)} deleted`).join('\n'));
  status.inventory = inventoryOf([...applied, ...pruned.failed.map((f) => f.ref)]);
  run.previous = status.inventory;
  run.changes = changes;
  run.applied = applied;
  if (pruned.failed.length)
    throw new RetryableError(
      Reason.PruneFailed,
      `prune failed: ${pruned.failed.map((f) => f.message).join('; ')}`,
    );
  return changes;
}

/**
 * Waits until the applied objects are healthy (kstatus, the CEL rules), unless the action's
 * disableWait; Jobs are skipped with disableWaitForJobs. A newer generation of the HelmRelease
 * (chart version or values in its spec) or a new artifact of its chart ends the wait at once: the
 * latest desired state wins.
 */
export async function waitForRelease(
  run: HelmReleaseRun,
  refs: ObjectRef[],
  opts: { disableWait?: boolean; disableWaitForJobs?: boolean; timeoutMs: number },
): Promise<{ healthy: boolean; message: string; superseded?: boolean }> {
  const toCheck = opts.disableWaitForJobs ? refs.filter((r) => r.kind !== 'Job') : refs;
  if (opts.disableWait || toCheck.length === 0) return { healthy: true, message: 'not waited for' };
  await run.ctx.saveProgress(`waiting for ${toCheck.length} objects to become healthy`);
  const exprs = run.healthExprs;
  try {
    return await waitForHealth(need(run.target, 'the target cluster'), toCheck, {
      timeoutMs: opts.timeoutMs,
      signal: run.superseded ? AbortSignal.any([run.signal, run.superseded]) : run.signal,
      custom: exprs ? (o) => evaluateHealth(exprs, o) : undefined,
    });
  } catch (err) {
    if (!(err instanceof Superseded)) throw err;
    return {
      healthy: false,
      superseded: true,
      message: `chart revision '${need(run.chart, 'the chart').revision}' superseded by ${err.message} during the health wait`,
    };
  }
}
