// When a hook counts as done (Helm's kube.Client.watchUntilReady, v3.22.0), and the polling waits
// the hook runner makes: for a hook to be ready, and for a deleted one to be gone.
import { setTimeout as sleep } from 'node:timers/promises';
import { formatDuration, type KubeObject } from '@mooring/runtime';
import { type HookObject, type ObjectCallOptions, readObject } from './hook-objects.ts';

export type HookReadiness = { state: 'waiting' } | { state: 'ready' } | { state: 'failed'; message: string };

interface Condition {
  type?: string;
  status?: string;
  reason?: string;
  message?: string;
}

interface ContainerStatus {
  name?: string;
  state?: { terminated?: { exitCode?: number; reason?: string; message?: string } };
}

const WAITING: HookReadiness = { state: 'waiting' };
const READY: HookReadiness = { state: 'ready' };

function jobReadiness(name: string, status: { conditions?: Condition[] } | undefined): HookReadiness {
  for (const c of status?.conditions ?? []) {
    if (c.status !== 'True') continue;
    if (c.type === 'Complete') return READY;
    if (c.type === 'Failed') {
      const why = [c.reason, c.message].filter(Boolean).join(': ');
      return { state: 'failed', message: why || `job ${name} failed` };
    }
  }
  return WAITING;
}

function podReadiness(
  name: string,
  status:
    | { phase?: string; reason?: string; message?: string; containerStatuses?: ContainerStatus[] }
    | undefined,
): HookReadiness {
  if (status?.phase === 'Succeeded') return READY;
  if (status?.phase !== 'Failed') return WAITING;
  // Helm says only "pod <name> failed"; the reason is what a user looks for next.
  const exited = (status.containerStatuses ?? [])
    .filter((c) => c.state?.terminated && c.state.terminated.exitCode !== 0)
    .map((c) => {
      const t = c.state!.terminated!;
      return `container ${c.name} exited with code ${t.exitCode}${t.reason ? ` (${t.reason})` : ''}`;
    });
  const why = [status.reason, status.message, ...exited].filter(Boolean).join(': ');
  return { state: 'failed', message: `pod ${name} failed${why ? `: ${why}` : ''}` };
}

/**
 * Whether a hook's object is done: a Job once Complete (Failed fails it; the message is the
 * condition's reason and message), a Pod once Succeeded (Failed fails it), any other kind as soon as it
 * exists. An object gone while waited on counts as done, as Helm's watch takes a Deleted event.
 */
export function hookReadiness(live: KubeObject | undefined): HookReadiness {
  if (!live) return READY;
  const name = live.metadata.name ?? '';
  if (live.kind === 'Job') return jobReadiness(name, live.status as { conditions?: Condition[] });
  if (live.kind === 'Pod') return podReadiness(name, live.status as Parameters<typeof podReadiness>[1]);
  return READY;
}

/** The wait ran out of time; the message says how long it waited and for what. */
export class HookTimeoutError extends Error {
  override name = 'HookTimeoutError';
}

// Polling rather than watching: a watch cannot carry the HelmRelease's impersonation through
// KubeClient, and every read of a hook's object must be made as that identity.
const FIRST_POLL_MS = 100;
const MAX_POLL_MS = 2_000;

async function pollUntil<V>(
  what: string,
  timeoutMs: number,
  signal: AbortSignal,
  check: () => Promise<V | undefined>,
): Promise<V> {
  const deadline = Date.now() + timeoutMs;
  let delay = FIRST_POLL_MS;
  for (;;) {
    signal.throwIfAborted();
    const v = await check();
    if (v !== undefined) return v;
    const left = deadline - Date.now();
    if (left <= 0)
      throw new HookTimeoutError(`timed out after ${formatDuration(timeoutMs)} waiting for ${what}`);
    await sleep(Math.min(delay, left), undefined, { signal });
    delay = Math.min(delay * 2, MAX_POLL_MS);
  }
}

/** Waits until the hook's object is done; resolves to its readiness (`ready` or `failed`). */
export function waitUntilDone(
  hook: HookObject,
  opts: ObjectCallOptions & { timeoutMs: number },
): Promise<Exclude<HookReadiness, { state: 'waiting' }>> {
  return pollUntil(`${hook.describe} to complete`, opts.timeoutMs, opts.signal, async () => {
    const r = hookReadiness(await readObject(hook, opts));
    return r.state === 'waiting' ? undefined : r;
  });
}

/** Waits until the hook's object no longer exists (Helm's WaitForDelete). */
export async function waitUntilGone(
  hook: HookObject,
  opts: ObjectCallOptions & { timeoutMs: number },
): Promise<void> {
  await pollUntil(`${hook.describe} to be deleted`, opts.timeoutMs, opts.signal, async () =>
    (await readObject(hook, opts)) === undefined ? true : undefined,
  );
}
