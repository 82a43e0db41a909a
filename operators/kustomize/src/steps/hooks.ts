import { RECONCILE_REQUESTED_AT_ANNOTATION, Reason } from '@mooring/api';
import { RetryableError, type StepOutcome } from '@mooring/runtime';
import type { HookPhase } from '../hooks/hook-annotations.ts';
import { isSameRun, recordFor } from '../hooks/hook-record.ts';
import { buildHooks, refOfHook, runHookPhase } from '../hooks/kustomization-hooks.ts';
import { impersonationFor } from '../impersonation.ts';
import { fromEntry, inventoryId, refToString } from '../inventory.ts';
import { type KustomizationRun, need } from '../kustomization-run.ts';
import { pruneObjects } from '../prune.ts';
import { applyOrderOf, setApplyOrder } from '../waves/order-of-run.ts';
import { ApplyOrderError, hasHooks, type PlannedHook, planApplyOrder } from '../waves/plan-apply-order.ts';
import { joinStoredInventory } from './stored-inventory.ts';

/** Each hook object once, whatever phases it is in. */
function distinctHooks(all: PlannedHook[]): PlannedHook[] {
  const seen = new Set<unknown>();
  return all.filter((h) => {
    if (seen.has(h.object)) return false;
    seen.add(h.object);
    return true;
  });
}

/**
 * Splits the render into hooks and waves (a bad annotation fails the revision, InvalidHookOrWave,
 * before anything is applied). A new revision or render starts a new status.hooks record; with
 * prune, the hook objects of the last one that this one no longer declares are deleted. An object
 * that was applied as a regular one and is a hook now leaves the inventory prune works from.
 */
export async function planWavesAndHooks(run: KustomizationRun): Promise<undefined> {
  const { obj, status, ctx } = run;
  const rendered = need(run.rendered, 'the render');
  const revision = need(run.source, 'the source').artifact.revision;
  let order: ReturnType<typeof planApplyOrder>;
  try {
    order = planApplyOrder(rendered.manifests);
  } catch (err) {
    if (err instanceof ApplyOrderError)
      throw new RetryableError(Reason.InvalidHookOrWave, `revision '${revision}': ${err.message}`);
    throw err;
  }
  setApplyOrder(run, order);
  const stored = status.hooks;
  if (!hasHooks(order) && !stored) return undefined;
  run.impersonate = impersonationFor(obj, run.deps.defaultServiceAccount);
  const key = {
    revision,
    digest: rendered.digest,
    requestedAt: obj.metadata.annotations?.[RECONCILE_REQUESTED_AT_ANNOTATION],
  };
  const record = recordFor(stored, key);
  const all = distinctHooks([
    ...order.hooks['pre-apply'],
    ...order.hooks['post-apply'],
    ...order.hooks['on-failure'],
  ]);
  // An object that cannot be built fails its phase when it runs, with its message.
  const built = await buildHooks(run, record, all).catch(() => []);
  const hookIds = new Set(built.map((s) => inventoryId(refOfHook(s.object))));
  if (!isSameRun(stored, key) && stored?.objects?.entries.length) {
    const gone = stored.objects.entries.filter((e) => !hookIds.has(e.id));
    if (gone.length && obj.spec.prune) {
      const pruned = await pruneObjects(
        need(run.target, 'the target cluster'),
        gone.map(fromEntry),
        run.owner,
        run.impersonate,
      );
      if (pruned.deleted.length)
        ctx.event(
          'info',
          'Progressing',
          pruned.deleted
            .map((r) => `${refToString(r)} deleted (a hook no longer in the revision)`)
            .join('\n'),
          { revision },
        );
      const failed = new Set(pruned.failed.map((f) => inventoryId(f.ref)));
      if (failed.size) record.objects = { entries: gone.filter((e) => failed.has(e.id)) };
    }
  }
  if (hasHooks(order) || record.objects?.entries.length) status.hooks = record;
  else delete status.hooks;
  if ((run.previous?.entries ?? []).some((e) => hookIds.has(e.id))) {
    await joinStoredInventory(run);
    run.previous = { entries: (run.previous?.entries ?? []).filter((e) => !hookIds.has(e.id)) };
  }
  return undefined;
}

const phaseStep =
  (phase: HookPhase) =>
  async (run: KustomizationRun): Promise<undefined> => {
    const order = applyOrderOf(run);
    if (order) await runHookPhase(run, phase, order.hooks[phase]);
    return undefined;
  };

/** pre-apply hooks: all complete before anything of the revision is applied. */
export const runPreApplyHooks = phaseStep('pre-apply');
/** post-apply hooks: after the revision is applied, pruned and healthy. */
export const runPostApplyHooks = phaseStep('post-apply');

/**
 * The step, and when it fails (not when cancelled) the revision's on-failure hooks, once per
 * revision; the step's own error is what the reconcile reports, with the hooks' failure added.
 */
export function withFailureHooks(
  inner: (run: KustomizationRun) => Promise<StepOutcome | undefined> | StepOutcome | undefined,
) {
  return async (run: KustomizationRun): Promise<StepOutcome | undefined> => {
    try {
      return await inner(run);
    } catch (err) {
      const hooks = applyOrderOf(run)?.hooks['on-failure'] ?? [];
      if (run.signal.aborted || hooks.length === 0 || !run.status.hooks) throw err;
      const extra = await runHookPhase(run, 'on-failure', hooks).then(
        () => undefined,
        (hookErr: unknown) => (hookErr as Error).message,
      );
      if (extra === undefined || run.signal.aborted) throw err;
      const reason = err instanceof RetryableError ? err.reason : Reason.ReconciliationFailed;
      throw new RetryableError(reason, `${(err as Error).message}; on-failure hooks: ${extra}`, {
        cause: err,
      });
    }
  };
}
