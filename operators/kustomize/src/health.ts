import { computeStatus } from '@mooring/kstatus';
import { ApiError, type KubeClient, systemClock } from '@mooring/runtime';
import { type ObjectRef, refToString } from './inventory.ts';
import { Superseded } from './superseded.ts';

export interface HealthVerdict {
  healthy: boolean;
  /** On failure: which objects are not healthy, and why. */
  message: string;
  /** True when an object reported Failed, so waiting longer cannot help. */
  failed: boolean;
}

/** Custom health for objects kstatus knows nothing about (healthCheckExprs); undefined = use kstatus. */
export type CustomHealth = (obj: Record<string, unknown>) => { status: string; message: string } | undefined;

/**
 * Waits until every object is Current by kstatus (or the custom expressions), failing fast when
 * one is Failed, or until the timeout. Reads again after 100 ms, then ever less often up to `pollMs`
 * (2 s): fast for objects that settle at once, cheap for slow rollouts; Flux polls every 5 s.
 * A newer revision arriving (`signal` aborted with Superseded) ends the wait at once by throwing it.
 */
export async function waitForHealth(
  client: KubeClient,
  refs: ObjectRef[],
  opts: { timeoutMs: number; signal: AbortSignal; pollMs?: number; custom?: CustomHealth },
): Promise<HealthVerdict> {
  const deadline = Date.now() + opts.timeoutMs;
  const pending = new Map(refs.map((r) => [refToString(r), r]));
  const reasons = new Map<string, string>();
  let delay = 100;
  for (;;) {
    for (const [key, ref] of [...pending]) {
      let obj: Record<string, unknown> | undefined;
      try {
        obj = (await client.get({
          apiVersion: ref.apiVersion,
          kind: ref.kind,
          namespace: ref.namespace || undefined,
          name: ref.name,
        })) as unknown as Record<string, unknown>;
      } catch (err) {
        if (!(err instanceof ApiError && err.isNotFound)) throw err;
        reasons.set(key, 'not found');
        continue;
      }
      const verdict = opts.custom?.(obj) ?? computeStatus(obj);
      if (verdict.status === 'Current') {
        pending.delete(key);
        reasons.delete(key);
      } else if (verdict.status === 'Failed') {
        return { healthy: false, failed: true, message: `${key} failed: ${verdict.message}` };
      } else {
        reasons.set(key, `${verdict.status}: ${verdict.message}`);
      }
    }
    if (pending.size === 0) return { healthy: true, failed: false, message: 'all objects are healthy' };
    if (opts.signal.reason instanceof Superseded) throw opts.signal.reason;
    if (Date.now() >= deadline || opts.signal.aborted) {
      const list = [...reasons].slice(0, 5).map(([k, why]) => `${k} (${why})`);
      const more = reasons.size > 5 ? ` and ${reasons.size - 5} more` : '';
      return { healthy: false, failed: false, message: `timeout waiting for: ${list.join(', ')}${more}` };
    }
    await systemClock.sleep(Math.min(delay, deadline - Date.now()), opts.signal);
    delay = Math.min(delay * 1.5, opts.pollMs ?? 2_000);
  }
}
