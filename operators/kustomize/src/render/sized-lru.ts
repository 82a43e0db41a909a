/**
 * Pending or settled values by key, least recently used out first, bounded by a count and by the
 * sum of the sizes of the settled values (a pending one counts 0 until it settles). A rejected
 * value is dropped. Written here rather than taken from lru-cache because its size accounting
 * needs the size when a value is set, and a render's size is known only once it finishes.
 */
export class SizedLru<V> {
  readonly #entries = new Map<string, { value: Promise<V>; size: number }>();
  readonly #maxEntries: number;
  readonly #maxSize: number;
  readonly #sizeOf: (value: V) => number;
  #size = 0;

  constructor(opts: { maxEntries: number; maxSize: number; sizeOf: (value: V) => number }) {
    this.#maxEntries = opts.maxEntries;
    this.#maxSize = opts.maxSize;
    this.#sizeOf = opts.sizeOf;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The sum of the settled values' sizes. */
  get bytes(): number {
    return this.#size;
  }

  /** The value, now the most recently used; undefined when absent. */
  get(key: string): Promise<V> | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    return entry.value;
  }

  set(key: string, value: Promise<V>): void {
    this.#drop(key);
    const entry = { value, size: 0 };
    this.#entries.set(key, entry);
    this.#trim();
    value.then(
      (v) => {
        if (this.#entries.get(key) !== entry) return;
        entry.size = this.#sizeOf(v);
        this.#size += entry.size;
        this.#trim();
      },
      () => {
        if (this.#entries.get(key) === entry) this.#drop(key);
      },
    );
  }

  #drop(key: string): void {
    const entry = this.#entries.get(key);
    if (!entry) return;
    this.#size -= entry.size;
    this.#entries.delete(key);
  }

  // The newest entry stays even when it alone is over the size bound: the caller is using it.
  #trim(): void {
    while (this.#entries.size > 1 && (this.#entries.size > this.#maxEntries || this.#size > this.#maxSize))
      this.#drop(this.#entries.keys().next().value!);
  }
}
