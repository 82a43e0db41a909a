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

/** The real clock. Timers are unref'd so a pending requeue never keeps a process alive. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout(fn, ms) {
    const t = setTimeout(fn, Math.max(0, ms));
    t.unref();
    return t;
  },
  clearTimeout(handle) {
    clearTimeout(handle as NodeJS.Timeout);
  },
  sleep(ms, signal) {
    return new Promise((resolve) => {
      if (signal?.aborted) return resolve();
      const t = setTimeout(done, Math.max(0, ms));
      function done() {
        clearTimeout(t);
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
