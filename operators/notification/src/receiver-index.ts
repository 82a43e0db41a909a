/** Where a Receiver lives. */
export interface ReceiverRef {
  namespace: string;
  name: string;
}

/**
 * Webhook paths to Receivers, kept by the Receiver reconciler so the server finds a Receiver with
 * one Map lookup (the same work for a known or an unknown path). The server re-reads the Receiver
 * before acting, so a stale entry can only cost a 404.
 */
export class ReceiverIndex {
  readonly #byPath = new Map<string, ReceiverRef>();
  readonly #byKey = new Map<string, string>();

  /** Points `path` at the Receiver, dropping its previous path. */
  set(ref: ReceiverRef, path: string): void {
    this.delete(ref);
    this.#byPath.set(path, ref);
    this.#byKey.set(`${ref.namespace}/${ref.name}`, path);
  }

  delete(ref: ReceiverRef): void {
    const key = `${ref.namespace}/${ref.name}`;
    const old = this.#byKey.get(key);
    if (old !== undefined) this.#byPath.delete(old);
    this.#byKey.delete(key);
  }

  lookup(path: string): ReceiverRef | undefined {
    return this.#byPath.get(path);
  }

  get size(): number {
    return this.#byPath.size;
  }
}
