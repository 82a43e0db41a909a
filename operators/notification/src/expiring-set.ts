/**
 * Keys remembered for a fixed time, bounded in number: the duplicate-event filter. Every key lives
 * exactly `ttlMs`, so insertion order is expiry order and pruning only ever looks at the front.
 */
export class ExpiringSet {
  readonly #ttlMs: number;
  readonly #max: number;
  readonly #now: () => number;
  readonly #expiry = new Map<string, number>();

  constructor(ttlMs: number, max = 100_000, now: () => number = Date.now) {
    this.#ttlMs = ttlMs;
    this.#max = max;
    this.#now = now;
  }

  /** Adds the key and returns true, or returns false when it was added less than `ttlMs` ago. */
  addIfAbsent(key: string): boolean {
    const now = this.#now();
    for (const [k, exp] of this.#expiry) {
      if (exp > now && this.#expiry.size < this.#max) break;
      this.#expiry.delete(k);
    }
    const exp = this.#expiry.get(key);
    if (exp !== undefined && exp > now) return false;
    this.#expiry.delete(key);
    this.#expiry.set(key, now + this.#ttlMs);
    return true;
  }

  get size(): number {
    return this.#expiry.size;
  }
}
