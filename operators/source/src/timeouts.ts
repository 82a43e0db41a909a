import { clearableTimeout, parseDuration } from '@mooring/runtime';

const DEFAULT_TIMEOUT_MS = 60_000;

/** `spec.timeout` in milliseconds, Flux's 60 s when unset (the CRD validates the format). */
export function specTimeoutMs(timeout: string | undefined): number {
  if (!timeout) return DEFAULT_TIMEOUT_MS;
  try {
    return parseDuration(timeout);
  } catch {
    return DEFAULT_TIMEOUT_MS;
  }
}

/**
 * The deadlines of one reconcile's remote operations: each fires `timeoutMs` after its own start,
 * or when the reconcile's stop signal does. reconcileSource clears them all when the reconcile
 * ends, so no timer, nor the signal it holds, outlives it: each remote call's deadline used to live
 * its full timeout (60 s by default) after a reconcile that took a second.
 */
export class RunDeadlines {
  /** `spec.timeout`: each remote operation's own limit, also handed to the Git client. */
  readonly timeoutMs: number;
  readonly #clears: (() => void)[] = [];
  readonly #stop: AbortSignal;

  constructor(timeoutMs: number, stop: AbortSignal) {
    this.timeoutMs = timeoutMs;
    this.#stop = stop;
  }

  /** A signal for one remote operation, starting now. */
  signal(): AbortSignal {
    const timeout = clearableTimeout(this.timeoutMs);
    this.#clears.push(timeout.clear);
    return AbortSignal.any([timeout.signal, this.#stop]);
  }

  /** The reconcile has ended: no deadline of it fires any more. */
  clear(): void {
    for (const clear of this.#clears.splice(0)) clear();
  }
}
