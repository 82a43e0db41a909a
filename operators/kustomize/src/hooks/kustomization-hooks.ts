// A Kustomization's hooks of one phase run against its target cluster as its service account,
// through the runner HelmRelease hooks use; what ran for which revision is kept in status.hooks.
import { type HookRunStatus, RECONCILE_REQUESTED_AT_ANNOTATION, Reason } from '@mooring/api';
import { RetryableError } from '@mooring/runtime';
import { inventoryId, inventoryOf, type ObjectRef } from '../inventory.ts';
import { type KustomizationRun, need } from '../kustomization-run.ts';
import type { PlannedHook } from '../waves/plan-apply-order.ts';
import type { HookPhase } from './hook-annotations.ts';
import { apiMessage, type HookObject, hookObjectFrom } from './hook-objects.ts';
import { PHASE_FIELD, phaseDecision } from './hook-record.ts';
import {
  deleteByPolicy,
  type HookCallOptions,
  HookFailure,
  type HookStep,
  rethrowIfAborted,
  runOneHook,
} from './hook-runner.ts';

/** On every hook object Mooring creates: the run it belongs to, so a restart resumes it instead of re-creating it. */
export const HOOK_REVISION_ANNOTATION = 'kustomize.mooring.dev/hook-revision';
export const HOOK_DIGEST_ANNOTATION = 'kustomize.mooring.dev/hook-digest';

export const refOfHook = (h: HookObject): ObjectRef => ({
  apiVersion: h.object.apiVersion,
  kind: h.object.kind,
  namespace: h.object.metadata.namespace ?? '',
  name: h.object.metadata.name ?? '',
});

/** Builds the phase's hook objects as they will be created, marked with the run they belong to. */
export async function buildHooks(
  run: KustomizationRun,
  record: HookRunStatus,
  hooks: readonly PlannedHook[],
) {
  const target = need(run.target, 'the target cluster');
  const steps: HookStep[] = [];
  for (const h of hooks) {
    const path = `${h.object.kind}/${h.object.metadata.name ?? ''}`;
    const object = await hookObjectFrom(h.object, path, target, {
      namespace: run.owner.namespace,
      labels: {},
      annotations: { [HOOK_REVISION_ANNOTATION]: record.revision, [HOOK_DIGEST_ANNOTATION]: record.digest },
    });
    steps.push({ object, policies: h.policies });
  }
  return steps;
}

function callOptions(run: KustomizationRun, record: HookRunStatus): HookCallOptions {
  return {
    client: need(run.target, 'the target cluster'),
    impersonate: run.impersonate,
    timeoutMs: run.timings.timeoutMs,
    signal: run.signal,
    isSameRun: (live) =>
      live.metadata.annotations?.[HOOK_REVISION_ANNOTATION] === record.revision &&
      live.metadata.annotations?.[HOOK_DIGEST_ANNOTATION] === record.digest,
  };
}

/** A hook still running when the reconcile's time ran out: not a failure of the hook, so not recorded as one. */
class HookTimeout extends Error {
  override name = 'HookTimeout';
}

/** Runs the steps in order; the first failure stops them. Returns the failure's message, or undefined. */
async function execute(
  phase: HookPhase,
  steps: HookStep[],
  opts: HookCallOptions,
): Promise<string | undefined> {
  const done: HookStep[] = [];
  for (const step of steps) {
    try {
      await runOneHook(step, opts);
      done.push(step);
    } catch (err) {
      // Out of time (its wait, or the Kustomization's timeout), not a failure of the hook: say which.
      const outOfTime =
        (err instanceof HookFailure && err.timedOut) ||
        (opts.signal.aborted && (opts.signal.reason as Error | undefined)?.name === 'TimeoutError');
      if (outOfTime)
        throw new HookTimeout(
          `${phase} hook ${step.object.describe} did not complete within spec.timeout; the next attempt waits for it again`,
        );
      if (!(err instanceof HookFailure)) throw err;
      let message = `${phase} hook ${step.object.describe} failed: ${err.message}`;
      if (err.started)
        await deleteByPolicy(step, 'hook-failed', opts).catch(() => rethrowIfAborted(opts.signal));
      for (const earlier of done)
        await deleteByPolicy(earlier, 'hook-succeeded', opts).catch((cleanup) => {
          rethrowIfAborted(opts.signal);
          message += `; deleting ${earlier.object.describe} (hook-succeeded) failed too: ${apiMessage(cleanup)}`;
        });
      return message;
    }
  }
  for (const step of [...done].reverse()) {
    try {
      await deleteByPolicy(step, 'hook-succeeded', opts);
    } catch (err) {
      rethrowIfAborted(opts.signal);
      return `${phase} hook ${step.object.describe} succeeded but deleting it (hook-succeeded) failed: ${apiMessage(err)}`;
    }
  }
  return undefined;
}

/**
 * Runs the revision's hooks of `phase` once per revision and render: skipped when status.hooks says
 * they succeeded for it; a recorded failure is thrown again (HookFailed) until a new revision or a
 * new requestedAt. Each outcome is in status.hooks before this returns, and the hooks' objects are
 * listed there before the first is created, so one removed from Git can still be deleted.
 */
export async function runHookPhase(
  run: KustomizationRun,
  phase: HookPhase,
  hooks: readonly PlannedHook[],
): Promise<void> {
  if (hooks.length === 0) return;
  const { ctx, status } = run;
  const record = need(status.hooks, 'the hook record');
  const requestedAt = run.obj.metadata.annotations?.[RECONCILE_REQUESTED_AT_ANNOTATION];
  const revision = record.revision;
  const decision = phaseDecision(record, phase, requestedAt);
  const failure = (message: string) =>
    new RetryableError(Reason.HookFailed, `revision '${revision}': ${message}`);
  if (!decision.run) {
    if (decision.failed)
      throw failure(`${decision.failed} (push a fix, or run mooring reconcile to run it again)`);
    return;
  }
  let steps: HookStep[];
  try {
    steps = await buildHooks(run, record, hooks);
  } catch (err) {
    rethrowIfAborted(run.signal);
    const message = `${phase} hook cannot be built: ${apiMessage(err)}`;
    record[PHASE_FIELD[phase]] = { result: 'Failed', message };
    throw failure(message);
  }
  const known = new Map((record.objects?.entries ?? []).map((e) => [e.id, e]));
  for (const ref of steps.map((s) => refOfHook(s.object)))
    if (!known.has(inventoryId(ref))) known.set(inventoryId(ref), inventoryOf([ref]).entries[0]!);
  record.objects = { entries: [...known.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)) };
  if (requestedAt !== undefined) record.requestedAt = requestedAt;
  delete record[PHASE_FIELD[phase]];
  await ctx.saveProgress(`running ${steps.length} ${phase} hooks of revision '${revision}'`);
  let failed: string | undefined;
  try {
    failed = await execute(phase, steps, callOptions(run, record));
  } catch (err) {
    if (err instanceof HookTimeout) throw failure(err.message);
    throw err;
  }
  if (failed) {
    record[PHASE_FIELD[phase]] = { result: 'Failed', message: failed };
    throw failure(failed);
  }
  record[PHASE_FIELD[phase]] = { result: 'Succeeded' };
  ctx.event(
    'info',
    'Progressing',
    steps.map((s) => `${s.object.describe} ${phase} hook succeeded`).join('\n'),
    { revision },
  );
}
