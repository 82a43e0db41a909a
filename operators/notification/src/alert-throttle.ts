import { RateLimiter } from './rate-limiter.ts';

export interface ThrottleOptions {
  /** Notifications an Alert sends at once before throttling; default 10. */
  burst?: number;
  /** Sustained notifications per second per Alert; default 0.2 (one every 5 s). */
  perSecond?: number;
  /** How long suppressed notifications are counted before one summary goes out; default 60 s. */
  summaryAfterMs?: number;
  now?: () => number;
}

/** What was suppressed for one Alert since its last summary. */
export interface Suppressed<T> {
  count: number;
  errors: number;
  last: T;
}

/**
 * Bounds what one Alert sends during an outage: a token bucket per Alert, and instead of the
 * notifications it drops, one summary per window saying how many were dropped.
 */
export class AlertThrottle<T> {
  readonly #o: Required<Omit<ThrottleOptions, 'now'>> & { now: () => number };
  readonly #limiter: RateLimiter;
  readonly #suppressed = new Map<string, Suppressed<T>>();
  readonly #timers = new Set<NodeJS.Timeout>();
  readonly #summarise: (alertKey: string, s: Suppressed<T>) => void;

  constructor(summarise: (alertKey: string, s: Suppressed<T>) => void, options: ThrottleOptions = {}) {
    this.#summarise = summarise;
    this.#o = {
      burst: options.burst ?? 10,
      perSecond: options.perSecond ?? 0.2,
      summaryAfterMs: options.summaryAfterMs ?? 60_000,
      now: options.now ?? Date.now,
    };
    this.#limiter = new RateLimiter(this.#o.perSecond, this.#o.burst, { now: this.#o.now });
  }

  /** True when the Alert may send `item` now; otherwise it is counted for the next summary. */
  admit(alertKey: string, item: T, severity: 'info' | 'error'): boolean {
    if (this.#limiter.tryTake(alertKey)) return true;
    const s = this.#suppressed.get(alertKey);
    if (s) {
      s.count++;
      if (severity === 'error') s.errors++;
      s.last = item;
      return false;
    }
    this.#suppressed.set(alertKey, { count: 1, errors: severity === 'error' ? 1 : 0, last: item });
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      const done = this.#suppressed.get(alertKey);
      this.#suppressed.delete(alertKey);
      if (done) this.#summarise(alertKey, done);
    }, this.#o.summaryAfterMs);
    timer.unref();
    this.#timers.add(timer);
    return false;
  }

  /** Stops pending summaries (shutdown). */
  close(): void {
    for (const t of this.#timers) clearTimeout(t);
    this.#timers.clear();
  }
}
