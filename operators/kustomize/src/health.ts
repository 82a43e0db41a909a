import { computeStatus } from '@mooring/kstatus';
import { ApiError, type KubeClient } from '@mooring/runtime';
import type { ApplyChange } from './apply/apply-set.ts';
import type { HealthWatches } from './health-watch.ts';
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

/** Each applied object as the apply returned it: its state right after it was written. */
export function appliedObjects(changes: readonly ApplyChange[]): Map<string, Record<string, unknown>> {
  return new Map(
    changes.flatMap((c) => (c.live ? [[refToString(c.ref), c.live as Record<string, unknown>]] : [])),
  );
}

/**
 * What a wait remembers between passes: an object judged Current at a version that is still its
 * newest (as a watch of the managed objects knows it) is Current now, and needs no new look: any
 * change of its status or spec would have given it a new version.
 */
export interface HealthMemo {
  /** The object's newest version, when a watch knows it. */
  versionOf(ref: ObjectRef): string | undefined;
  /** Per object (refToString), the version last judged Current; the wait keeps it up to date. */
  currentAt: Map<string, string>;
}

/** What the wait needs to know of one object's state. */
type Verdict = { status: string; message: string };

/** `a` is an older version than `b` (etcd revisions; anything else counts as not older). */
function olderThan(a: string | undefined, b: string | undefined): boolean {
  if (!a || !b || !/^\d+$/.test(a) || !/^\d+$/.test(b)) return false;
  return BigInt(a) < BigInt(b);
}

/**
 * Waits until every object is Current by kstatus (or the custom expressions), failing fast when
 * one is Failed, or until the timeout. An object the caller already holds (`known`: what the apply
 * returned) is judged on that copy first: most objects are Current the moment they are written,
 * and need no read at all. The rest are followed through `watches` (one informer per kind shared
 * by every wait on this cluster) with a read every 5 s as a safety net; without it, or for a kind
 * that cannot be watched, each is read again after 100 ms, then ever less often up to `pollMs`
 * (2 s): fast for objects that settle at once, cheap for slow rollouts; Flux polls every 5 s.
 * A newer revision arriving (`signal` aborted with Superseded) ends the wait at once by throwing it.
 */
export async function waitForHealth(
  client: KubeClient,
  refs: ObjectRef[],
  opts: {
    timeoutMs: number;
    signal: AbortSignal;
    pollMs?: number;
    custom?: CustomHealth;
    watches?: HealthWatches;
    known?: ReadonlyMap<string, Record<string, unknown>>;
    memo?: HealthMemo;
  },
): Promise<HealthVerdict> {
  const deadline = Date.now() + opts.timeoutMs;
  const pending = new Map(refs.map((r) => [refToString(r), r]));
  const reasons = new Map<string, string>();
  /** The newest version judged per object, so a lagging copy never overrides a newer one. */
  const judged = new Map<string, string | undefined>();
  let failure: string | undefined;
  const judge = (key: string, obj: Record<string, unknown> | undefined) => {
    if (!pending.has(key)) return;
    if (!obj) {
      reasons.set(key, 'not found');
      return;
    }
    const version = (obj.metadata as { resourceVersion?: string } | undefined)?.resourceVersion;
    if (olderThan(version, judged.get(key))) return;
    judged.set(key, version);
    const verdict: Verdict = opts.custom?.(obj) ?? computeStatus(obj);
    if (verdict.status === 'Current') {
      pending.delete(key);
      reasons.delete(key);
      if (version) opts.memo?.currentAt.set(key, version);
      else opts.memo?.currentAt.delete(key);
    } else if (verdict.status === 'Failed') {
      failure ??= `${key} failed: ${verdict.message}`;
    } else {
      reasons.set(key, `${verdict.status}: ${verdict.message}`);
    }
  };
  const read = async (key: string, ref: ObjectRef) => {
    try {
      const obj = (await client.get({
        apiVersion: ref.apiVersion,
        kind: ref.kind,
        namespace: ref.namespace || undefined,
        name: ref.name,
      })) as unknown as Record<string, unknown>;
      judge(key, obj);
    } catch (err) {
      if (!(err instanceof ApiError && err.isNotFound)) throw err;
      judge(key, undefined);
    }
  };

  const polled = new Map<string, ObjectRef>();
  const watched = new Map<string, ObjectRef>();
  const unsubscribes: (() => void)[] = [];
  let wake: (() => void) | undefined;
  try {
    for (const [key, ref] of [...pending]) {
      const known = opts.known?.get(key);
      // What this pass wrote or read is newer than a watch that may lag behind it: the memory
      // speaks only for objects the pass left alone without a look.
      const currentAt = known ? undefined : opts.memo?.currentAt.get(key);
      if (currentAt !== undefined && opts.memo?.versionOf(ref) === currentAt) {
        pending.delete(key);
        continue;
      }
      if (known) judge(key, known);
      if (!pending.has(key)) continue;
      const watches = opts.watches?.client === client ? opts.watches : undefined;
      const subscription = await watches?.subscribe(ref, (obj) => {
        judge(key, obj as Record<string, unknown> | undefined);
        wake?.();
      });
      if (!subscription) {
        polled.set(key, ref);
        if (!known) await read(key, ref);
        continue;
      }
      unsubscribes.push(subscription.unsubscribe);
      watched.set(key, ref);
      if (subscription.current) judge(key, subscription.current as Record<string, unknown>);
      else if (!known) await read(key, ref);
    }
    let delay = 100;
    let pollAt = Date.now() + delay;
    let safetyAt = Date.now() + 5_000;
    for (;;) {
      if (failure) return { healthy: false, failed: true, message: failure };
      if (pending.size === 0) return { healthy: true, failed: false, message: 'all objects are healthy' };
      if (opts.signal.reason instanceof Superseded) throw opts.signal.reason;
      if (Date.now() >= deadline || opts.signal.aborted) {
        const list = [...reasons].slice(0, 5).map(([k, why]) => `${k} (${why})`);
        const more = reasons.size > 5 ? ` and ${reasons.size - 5} more` : '';
        return { healthy: false, failed: false, message: `timeout waiting for: ${list.join(', ')}${more}` };
      }
      const polling = [...polled].some(([key]) => pending.has(key));
      const until = Math.min(deadline, polling ? pollAt : safetyAt);
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          opts.signal.removeEventListener('abort', done);
          wake = undefined;
          resolve();
        };
        const timer = setTimeout(done, Math.max(0, until - Date.now()));
        opts.signal.addEventListener('abort', done, { once: true });
        wake = done;
      });
      if (failure || pending.size === 0 || opts.signal.aborted) continue;
      if (polling && Date.now() >= pollAt) {
        for (const [key, ref] of polled) if (pending.has(key)) await read(key, ref);
        delay = Math.min(delay * 1.5, opts.pollMs ?? 2_000);
        pollAt = Date.now() + delay;
      }
      if (Date.now() >= safetyAt) {
        // The watch should have told us; a read repairs a missed or stuck one.
        for (const [key, ref] of watched) if (pending.has(key)) await read(key, ref);
        safetyAt = Date.now() + 5_000;
      }
    }
  } finally {
    for (const unsubscribe of unsubscribes) unsubscribe();
  }
}
