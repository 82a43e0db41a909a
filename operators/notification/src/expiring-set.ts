/**
 * Keys remembered for a fixed time, bounded in number: the duplicate-event filter and the
 * webhook replay cache. Every key lives
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

  /** True when the key was added less than `ttlMs` ago. */
  has(key: string): boolean {
    const exp = this.#expiry.get(key);
    return exp !== undefined && exp > this.#now();
  }

  /** Forgets the key (a delivery that was reserved but then failed). */
  delete(key: string): void {
    this.#expiry.delete(key);
  }

  get size(): number {
    return this.#expiry.size;
  }
}
