import { KUSTOMIZE_NAME_LABEL, KUSTOMIZE_NAMESPACE_LABEL } from '@mooring/api';
import type { ReconcileQueue } from '@mooring/runtime';
import { type KnownVersion, knownVersionId } from './apply/apply-set.ts';
import type { ManagedChange, ManagedVersions } from './apply/managed-versions.ts';

/**
 * After a wake, the same Kustomization is woken again no sooner than this (Argo CD's self-heal
 * waits 5 s too): another writer fighting over a field must not make the two spin.
 */
export const DRIFT_WAKE_EVERY_MS = 5_000;

/**
 * A change is judged this long after it was heard: by then the answer to our own write has come
 * back (an event can arrive before it), and the version it left is remembered.
 */
export const DRIFT_SETTLE_MS = 250;

/**
 * Drift wakes its owner: when an object a Kustomization applied is edited or deleted by anyone
 * else, that Kustomization reconciles now and puts it back, instead of at its next interval (as
 * Flux does). Our own writes are told apart by their version, which the apply remembers: a change
 * is judged a moment after it was heard (our write's answer can come back after its event).
 */
export function wakeOwnersOnDrift(
  versions: ManagedVersions,
  knownVersions: ReadonlyMap<string, ReadonlyMap<string, KnownVersion>>,
  queue: ReconcileQueue,
  now: () => number = Date.now,
): { judging(): number } {
  const lastWake = new Map<string, number>();
  const judging = new Map<string, ManagedChange>();
  const wake = (owner: string) => {
    const since = now() - (lastWake.get(owner) ?? Number.NEGATIVE_INFINITY);
    if (since >= DRIFT_WAKE_EVERY_MS) {
      lastWake.set(owner, now());
      queue.add(owner);
    } else {
      queue.addAfter(owner, DRIFT_WAKE_EVERY_MS - since);
    }
    // Forget owners woken long ago, so the map stays as small as the set of recent drifts.
    if (lastWake.size > 10_000)
      for (const [key, at] of lastWake) if (now() - at > DRIFT_WAKE_EVERY_MS) lastWake.delete(key);
  };
  versions.onChange((change) => {
    const name = change.labels[KUSTOMIZE_NAME_LABEL];
    const namespace = change.labels[KUSTOMIZE_NAMESPACE_LABEL];
    if (!name || !namespace) return;
    const owner = `${namespace}/${name}`;
    const id = knownVersionId(change.ref);
    // Not applied by this process (another shard's, or not yet): not ours to put back.
    if (!knownVersions.get(owner)?.has(id)) return;
    const key = `${owner} ${change.ref.apiVersion} ${id}`;
    // The newest change of the object is the one judged: ours after someone's puts theirs back.
    const pending = judging.has(key);
    judging.set(key, change);
    if (pending) return;
    const timer = setTimeout(() => {
      const newest = judging.get(key) ?? change;
      judging.delete(key);
      const known = knownVersions.get(owner)?.get(id);
      // Compared with the change's own version, not the newest one the watch holds: status writes
      // after our apply (a rollout) change the version without being drift.
      if (known && newest.version !== known.version) wake(owner);
    }, DRIFT_SETTLE_MS);
    timer.unref?.();
  });
  return { judging: () => judging.size };
}
