/** Time as the runtime sees it; injected so simulation tests can drive a virtual clock. */
export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
  /** Resolves after `ms`, or at once (without throwing) when `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** An opaque timer handle. */
export type TimerHandle = { readonly __timer: unique symbol } | NodeJS.Timeout;

/**
 * The longest delay one Node timer takes. Node runs a longer (or NaN) delay after 1 ms instead,
 * with a TimeoutOverflowWarning: `interval: 1000h` turned into a hot loop that way.
 */
export const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;

/** A delay as a timer should take it: NaN and negatives are 0, the rest as given (Infinity is never). */
function wholeDelay(ms: number): number {
  return Number.isNaN(ms) ? 0 : Math.max(0, ms);
}

/** Timers that take at most `MAX_TIMER_DELAY_MS`, as Node's, a Clock's, or a test's. */
export interface ChainableTimers<H> {
  set(fn: () => void, ms: number): H;
  clear(handle: H): void;
}

/**
 * A timer longer than one Node timer can be: re-armed in steps of at most `MAX_TIMER_DELAY_MS`
 * until the whole delay has passed. Steps are counted, not read off the wall clock, so the delay
 * is as monotonic as Node's own timers. An infinite delay never fires.
 */
export class ChainedTimer<H = NodeJS.Timeout> {
  readonly #timers: ChainableTimers<H>;
  readonly #fn: () => void;
  #current: H | undefined;
  #remaining: number;
  #cancelled = false;

  constructor(timers: ChainableTimers<H>, fn: () => void, ms: number) {
    this.#timers = timers;
    this.#fn = fn;
    this.#remaining = wholeDelay(ms);
    this.#arm();
  }

  /** Stops the timer; it will not fire. */
  cancel(): void {
    this.#cancelled = true;
    if (this.#current !== undefined) this.#timers.clear(this.#current);
    this.#current = undefined;
  }

  #arm(): void {
    const step = Math.min(this.#remaining, MAX_TIMER_DELAY_MS);
    this.#remaining -= step;
    this.#current = this.#timers.set(() => {
      this.#current = undefined;
      if (this.#cancelled) return;
      if (this.#remaining > 0) this.#arm();
      else this.#fn();
    }, step);
  }
}

/** Node's setTimeout for any delay: longer ones are chained, so none overflows into 1 ms. */
function nodeTimeout(fn: () => void, ms: number, unref: boolean): TimerHandle {
  const delay = wholeDelay(ms);
  if (delay <= MAX_TIMER_DELAY_MS) {
    const t = setTimeout(fn, delay);
    if (unref) t.unref();
    return t;
  }
  const chained = new ChainedTimer(
    {
      set(step, stepMs) {
        const t = setTimeout(step, stepMs);
        if (unref) t.unref();
        return t;
      },
      clear: (t) => clearTimeout(t),
    },
    fn,
    delay,
  );
  return chained as unknown as TimerHandle;
}

function clearNodeTimeout(handle: TimerHandle): void {
  if (handle instanceof ChainedTimer) handle.cancel();
  else clearTimeout(handle as NodeJS.Timeout);
}

/**
 * The real clock. Timers are unref'd so a pending requeue never keeps a process alive. Any delay
 * works: past `MAX_TIMER_DELAY_MS` timers are chained, NaN and negatives run at once.
 */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => nodeTimeout(fn, ms, true),
  clearTimeout: clearNodeTimeout,
  sleep(ms, signal) {
    return new Promise((resolve) => {
      if (signal?.aborted) return resolve();
      const t = nodeTimeout(done, ms, false);
      function done() {
        clearNodeTimeout(t);
        signal?.removeEventListener('abort', done);
        resolve();
      }
      signal?.addEventListener('abort', done, { once: true });
    });
  },
};

/** `ms` spread by up to ±`fraction`, so many objects on the same interval do not fire together. */
export function jitter(ms: number, fraction = 0.1, random: () => number = Math.random): number {
  return Math.round(ms * (1 + fraction * (2 * random() - 1)));
}

/**
 * A signal that aborts when `parent` does, until `detach` is called. Linked by hand, not with
 * AbortSignal.any: on Node 20 every AbortSignal.any call adds an entry to each input's set of
 * dependants that is never taken out again, so each reconcile that combined the controller's
 * lifelong stop signal with a deadline of its own grew that set by one, for good (6,000 entries
 * after five no-op passes over 1,000 Kustomizations). A reconcile's combinations now hang off a
 * signal of its own, which is garbage once the reconcile has ended and let go of `parent`.
 */
export function childSignal(parent: AbortSignal): {
  signal: AbortSignal;
  detach(): void;
  /** Aborts the child alone (a watch's own stall), not the parent. */
  abort(reason?: unknown): void;
} {
  const controller = new AbortController();
  const abort = (reason?: unknown) => controller.abort(reason);
  if (parent.aborted) {
    controller.abort(parent.reason);
    return { signal: controller.signal, detach: () => {}, abort };
  }
  const follow = () => controller.abort(parent.reason);
  parent.addEventListener('abort', follow, { once: true });
  return {
    signal: controller.signal,
    detach: () => parent.removeEventListener('abort', follow),
    abort,
  };
}

/**
 * A signal that aborts with a TimeoutError after `ms`, and a `clear` for when the work ends first.
 * - The delay is kept within what a Node timer holds (past 2^31-1 ms Node fires after 1 ms, so a
 *   stored object's absurd timeout would abort every attempt at once).
 * - Not AbortSignal.timeout: Node 20's AbortSignal.any holds its inputs weakly, and a timeout
 *   signal nothing else holds is collected with its timer, so `any([shutdown, timeout])` never
 *   timed out (a reconcile outlived its spec.timeout by minutes). Here the timer holds its
 *   controller until it fires; unref'd, it keeps no process alive.
 * - Cleared, the timer and the signal it holds are gone instead of living on until the deadline.
 *   A Kustomization's deadline is its spec.timeout (its interval less 30 s by default), so each
 *   reconcile left a timer for that long: 3,957 live after five no-op passes over 1,000
 *   Kustomizations with a 1m timeout.
 */
export function clearableTimeout(ms: number): { signal: AbortSignal; clear(): void } {
  const delay = Number.isFinite(ms) ? Math.min(Math.max(ms, 0), MAX_TIMER_DELAY_MS) : MAX_TIMER_DELAY_MS;
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')),
    delay,
  );
  // Optional: the simulation's clock replaces setTimeout with timers that hold nothing open.
  (timer as { unref?: () => void }).unref?.();
  return { signal: controller.signal, clear: () => clearTimeout(timer) };
}

/**
 * Deadlines that end together: each `signal(ms)` aborts `ms` after it was asked for, or when `stop`
 * (if any) does, and `clear()` cancels every timer still pending. Each reconcile holds one (its
 * context's `deadline`), cleared by the controller when the reconcile ends; a request with retries
 * holds one per attempt (the Provider sender). Without the clear, each
 * deadline lived its full timeout (60 s by default) after a call that took a second, with the
 * signal and what listens to it.
 */
export class DeadlineScope {
  readonly #stop: AbortSignal | undefined;
  readonly #clears: (() => void)[] = [];

  /** `stop` should live no longer than the scope (a reconcile's own signal): see {@link childSignal}. */
  constructor(stop?: AbortSignal) {
    this.#stop = stop;
  }

  /** A signal that aborts with a TimeoutError `ms` from now, or when the scope's stop signal does. */
  signal(ms: number): AbortSignal {
    const timeout = clearableTimeout(ms);
    this.#clears.push(timeout.clear);
    return this.#stop ? AbortSignal.any([timeout.signal, this.#stop]) : timeout.signal;
  }

  /** The work has ended: no deadline of this scope fires any more. */
  clear(): void {
    for (const clear of this.#clears.splice(0)) clear();
  }
}
