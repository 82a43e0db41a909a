import { ConditionType, Reason } from '@mooring/api';
import { RetryableError } from '@mooring/runtime';
import { waitForHealth } from '../health.ts';
import { evaluateHealth } from '../health-exprs.ts';
import type { ObjectRef } from '../inventory.ts';
import { type KustomizationRun, need } from '../kustomization-run.ts';

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
  if (run.summary) await ctx.saveProgress(`waiting for ${toCheck.length} objects to become healthy`);
  const exprs = run.healthExprs;
  const health = await waitForHealth(need(run.target, 'the target cluster'), toCheck, {
    timeoutMs: run.timings.timeoutMs,
    signal: run.signal,
    custom: exprs ? (o) => evaluateHealth(exprs, o) : undefined,
  });
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
