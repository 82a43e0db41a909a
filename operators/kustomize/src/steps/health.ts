import { ConditionType, Reason } from '@mooring/api';
import { RetryableError } from '@mooring/runtime';
import { appliedObjects, waitForHealth } from '../health.ts';
import { evaluateHealth } from '../health-exprs.ts';
import type { ObjectRef } from '../inventory.ts';
import { healthMemoOf, type KustomizationRun, need } from '../kustomization-run.ts';

/** A wait longer than this is shown on the status (Reconciling, Progressing) while it runs. */
const SHOW_WAIT_AFTER_MS = 1_000;

/**
 * Awaits `waiting`; if it takes longer than a second, writes `message` as progress meanwhile, so
 * a long wait is visible and a short one (most objects are healthy at once) costs no status write.
 */
async function showWaitIfLong<T>(
  run: KustomizationRun,
  waiting: Promise<T>,
  message: string | undefined,
): Promise<T> {
  if (!message) return waiting;
  let written: Promise<unknown> | undefined;
  const timer = setTimeout(() => {
    // Settled at once: its error is raised below, after the wait, never as an unhandled rejection.
    written = run.ctx.saveProgress(message).then(
      () => undefined,
      (err: unknown) => ({ err }),
    );
  }, SHOW_WAIT_AFTER_MS);
  let result: T;
  try {
    result = await waiting;
  } catch (err) {
    // The progress write lands before the reconcile's own, never after it.
    clearTimeout(timer);
    await written;
    throw err;
  }
  clearTimeout(timer);
  const outcome = (await written) as { err: unknown } | undefined;
  if (outcome) throw outcome.err;
  return result;
}

/** With `wait`, every applied object becomes healthy; else the `healthChecks` named ones do. */
export async function checkHealth(run: KustomizationRun): Promise<undefined> {
  const { obj, ctx } = run;
  const toCheck: ObjectRef[] = obj.spec.wait
    ? need(run.applied, 'the applied objects')
    : (obj.spec.healthChecks ?? []).map((h) => ({
        apiVersion: h.apiVersion ?? 'v1',
        kind: h.kind,
        namespace: h.namespace ?? run.owner.namespace,
        name: h.name,
      }));
  if (toCheck.length === 0) return undefined;
  const exprs = run.healthExprs;
  const waiting = waitForHealth(need(run.target, 'the target cluster'), toCheck, {
    timeoutMs: run.timings.timeoutMs,
    signal: run.signal,
    custom: exprs ? (o) => evaluateHealth(exprs, o) : undefined,
    watches: run.deps.healthWatches,
    known: appliedObjects(run.changes ?? []),
    memo: healthMemoOf(run),
  });
  const health = await showWaitIfLong(
    run,
    waiting,
    run.summary ? `waiting for ${toCheck.length} objects to become healthy` : undefined,
  );
  if (!health.healthy) {
    ctx.setCondition(ConditionType.Healthy, 'False', Reason.HealthCheckFailed, health.message);
    throw new RetryableError(
      Reason.HealthCheckFailed,
      `health check failed for revision '${need(run.source, 'the source').artifact.revision}': ${health.message}`,
    );
  }
  ctx.setCondition(ConditionType.Healthy, 'True', Reason.Succeeded, 'all health checks passed');
  return undefined;
}
