/**
 * Token buckets keyed by a string (Alert, Receiver, client address) that refuse instead of wait.
 * Hand-written: the runtime's TokenBucket lends tokens for a caller to wait on, which under a flood
 * would push the debt ever further; a server must answer 429 at once and forget idle keys.
 */
export class RateLimiter {
  readonly #perSecond: number;
  readonly #burst: number;
  readonly #max: number;
  readonly #now: () => number;
  readonly #buckets = new Map<string, { tokens: number; last: number }>();

  constructor(perSecond: number, burst: number, options: { maxKeys?: number; now?: () => number } = {}) {
    if (!(perSecond > 0) || !(burst >= 1))
      throw new Error(`invalid rate limit: ${perSecond}/s, burst ${burst}`);
    this.#perSecond = perSecond;
    this.#burst = burst;
    this.#max = options.maxKeys ?? 10_000;
    this.#now = options.now ?? Date.now;
  }

  /** Takes a token for `key` and returns true, or returns false when its bucket is empty. */
  tryTake(key: string): boolean {
    const now = this.#now();
    let b = this.#buckets.get(key);
    if (b) {
      b.tokens = Math.min(this.#burst, b.tokens + ((now - b.last) / 1000) * this.#perSecond);
      b.last = now;
      // Re-insert so the Map's order is least-recently-used first.
      this.#buckets.delete(key);
    } else {
      b = { tokens: this.#burst, last: now };
      if (this.#buckets.size >= this.#max) {
        const oldest = this.#buckets.keys().next().value;
        if (oldest !== undefined) this.#buckets.delete(oldest);
      }
    }
    this.#buckets.set(key, b);
    if (b.tokens < 1) return false;
    b.tokens -= 1;
    return true;
  }
}
