// A revision's regular objects applied wave by wave: each wave is one applySet (its stages planned
// and dry-run whole, its intent recorded before it writes), and with `wait` or health checks a wave
// is healthy before the next one is applied.
import { Reason } from '@mooring/api';
import { RetryableError } from '@mooring/runtime';
import { type ApplyChange, type ApplySetOptions, applySet } from '../apply/apply-set.ts';
import type { Manifest } from '../apply/object-policy.ts';
import { appliedObjects, waitForHealth } from '../health.ts';
import { evaluateHealth } from '../health-exprs.ts';
import { inventoryId, type ObjectRef } from '../inventory.ts';
import { healthMemoOf, type KustomizationRun, need } from '../kustomization-run.ts';
import type { Wave } from './apply-waves.ts';
import { applyOrderOf } from './order-of-run.ts';

/** What must be healthy before the wave after this one: all of it with `wait`, else its health-checked objects. */
function toWaitFor(run: KustomizationRun, applied: ApplyChange[]): ObjectRef[] {
  const refs = applied.map((c) => c.ref);
  if (run.obj.spec.wait) return refs;
  const checked = new Set(
    (run.obj.spec.healthChecks ?? []).map((h) =>
      inventoryId({
        apiVersion: h.apiVersion ?? 'v1',
        kind: h.kind,
        namespace: h.namespace ?? run.owner.namespace,
        name: h.name,
      }),
    ),
  );
  return refs.filter((r) => checked.has(inventoryId(r)));
}

async function waitForWave(run: KustomizationRun, wave: Wave, applied: ApplyChange[]): Promise<void> {
  const refs = toWaitFor(run, applied);
  if (refs.length === 0) return;
  const revision = need(run.source, 'the source').artifact.revision;
  await run.ctx.saveProgress(
    `wave ${wave.wave} applied: waiting for ${refs.length} objects to become healthy`,
  );
  const exprs = run.healthExprs;
  const health = await waitForHealth(need(run.target, 'the target cluster'), refs, {
    timeoutMs: run.timings.timeoutMs,
    signal: run.signal,
    custom: exprs ? (o) => evaluateHealth(exprs, o) : undefined,
    watches: run.deps.healthWatches,
    known: appliedObjects(applied),
    memo: healthMemoOf(run),
  });
  if (!health.healthy)
    throw new RetryableError(
      Reason.HealthCheckFailed,
      `wave ${wave.wave} of revision '${revision}' is not healthy, so the waves after it were not applied: ${health.message}`,
    );
}

/** Applies the render in the planned waves (the whole render at once when nothing was planned). */
export async function applyInWaves(
  run: KustomizationRun,
  manifests: Manifest[],
  opts: ApplySetOptions,
): Promise<ApplyChange[]> {
  const order = applyOrderOf(run);
  if (!order) return applySet(manifests, opts);
  const changes: ApplyChange[] = [];
  for (const [i, wave] of order.waves.entries()) {
    const applied = await applySet(wave.objects, opts);
    changes.push(...applied);
    if (i < order.waves.length - 1) await waitForWave(run, wave, applied);
  }
  return changes;
}
