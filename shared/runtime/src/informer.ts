import { ApiError } from './api-error.ts';
import { type Clock, childSignal, jitter, systemClock, type TimerHandle } from './clock.ts';
import type { KubeClient } from './kube-client.ts';
import { type KubeObject, objectKey } from './kube-object.ts';

export interface InformerEvent<T extends KubeObject> {
  type: 'added' | 'updated' | 'deleted';
  object: T;
  /** The cached object before an update or a delete. */
  old?: T;
}

export type InformerHandler<T extends KubeObject> = (event: InformerEvent<T>) => void;

export interface InformerOptions {
  apiVersion: string;
  kind: string;
  /** Only this namespace (`--watch-namespace`); all namespaces when unset. */
  namespace?: string;
  /** Only objects matching this selector (`--watch-label-selector`, for sharding). */
  labelSelector?: string;
  clock?: Clock;
  /** Server-side watch timeout; jittered so many informers do not reconnect together. */
  watchTimeoutSeconds?: number;
  /** A full re-list this often, which repairs any event a watch may have lost. */
  relistIntervalMs?: number;
  /** No event (bookmarks included) for this long means the watch is stuck: restart it. */
  stallTimeoutMs?: number;
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  onError?: (err: Error, attempt: number) => void;
  /** What the cache keeps of each object (e.g. without managedFields, to save memory). */
  transform?: (obj: KubeObject) => KubeObject;
}

/**
 * A cache of one kind kept current by list-then-watch. Unlike client-node's informer it asks for
 * bookmarks and a server timeout, re-lists on 410 Gone and on a timer, restarts with backoff on
 * any error, restarts a watch that went quiet, and never lets a handler's exception escape.
 */
export class Informer<T extends KubeObject = KubeObject> {
  readonly #client: KubeClient;
  readonly #opts: Required<Omit<InformerOptions, 'namespace' | 'labelSelector' | 'onError' | 'transform'>> &
    Pick<InformerOptions, 'namespace' | 'labelSelector' | 'onError' | 'transform'>;
  readonly #cache = new Map<string, T>();
  readonly #handlers: InformerHandler<T>[] = [];
  #synced = false;
  #resourceVersion: string | undefined;
  #running: Promise<void> | undefined;
  #stop = new AbortController();
  /** Counts of lists and watches started, so tests can see recovery happen. */
  readonly stats = { lists: 0, watches: 0, errors: 0, stalls: 0 };

  constructor(client: KubeClient, options: InformerOptions) {
    this.#client = client;
    this.#opts = {
      clock: systemClock,
      watchTimeoutSeconds: 300,
      relistIntervalMs: 10 * 60_000,
      initialBackoffMs: 500,
      maxBackoffMs: 30_000,
      ...options,
      stallTimeoutMs: options.stallTimeoutMs ?? ((options.watchTimeoutSeconds ?? 300) + 60) * 1000,
    };
  }

  get kind(): string {
    return this.#opts.kind;
  }

  /** Registers a handler; handlers should only enqueue work. */
  on(handler: InformerHandler<T>): void {
    this.#handlers.push(handler);
  }

  /** True once the first list has filled the cache. */
  hasSynced(): boolean {
    return this.#synced;
  }

  get(key: string): T | undefined {
    return this.#cache.get(key);
  }

  list(): T[] {
    return [...this.#cache.values()];
  }

  /** Starts the list/watch loop in the background; resolves when the cache is first synced. */
  async start(): Promise<void> {
    if (!this.#running) {
      this.#stop = new AbortController();
      this.#running = this.#loop(this.#stop.signal);
    }
    while (!this.#synced && !this.#stop.signal.aborted) await this.#opts.clock.sleep(20, this.#stop.signal);
  }

  async stop(): Promise<void> {
    this.#stop.abort();
    await this.#running;
    this.#running = undefined;
  }

  #emit(event: InformerEvent<T>): void {
    for (const handler of this.#handlers) {
      try {
        handler(event);
      } catch (err) {
        this.#opts.onError?.(err as Error, 0);
      }
    }
  }

  async #relist(): Promise<void> {
    this.stats.lists++;
    const list = await this.#client.list<T>(this.#opts.apiVersion, this.#opts.kind, {
      namespace: this.#opts.namespace,
      labelSelector: this.#opts.labelSelector,
    });
    const seen = new Set<string>();
    for (const item of list.items) {
      const obj = this.#keep(item);
      const key = objectKey(obj);
      seen.add(key);
      const old = this.#cache.get(key);
      this.#cache.set(key, obj);
      if (!old) this.#emit({ type: 'added', object: obj });
      else if (old.metadata.resourceVersion !== obj.metadata.resourceVersion)
        this.#emit({ type: 'updated', object: obj, old });
    }
    for (const [key, old] of this.#cache) {
      if (!seen.has(key)) {
        this.#cache.delete(key);
        this.#emit({ type: 'deleted', object: old });
      }
    }
    this.#resourceVersion = list.metadata.resourceVersion;
    this.#synced = true;
  }

  #keep(obj: T): T {
    return this.#opts.transform ? (this.#opts.transform(obj) as T) : obj;
  }

  #apply(type: 'ADDED' | 'MODIFIED' | 'DELETED', received: T): void {
    const obj = this.#keep(received);
    obj.apiVersion ??= this.#opts.apiVersion;
    obj.kind ??= this.#opts.kind;
    const key = objectKey(obj);
    const old = this.#cache.get(key);
    if (type === 'DELETED') {
      this.#cache.delete(key);
      // A watch narrowed by labels reports an object that lost them as deleted, without them.
      this.#emit(old ? { type: 'deleted', object: obj, old } : { type: 'deleted', object: obj });
    } else {
      this.#cache.set(key, obj);
      this.#emit(old ? { type: 'updated', object: obj, old } : { type: 'added', object: obj });
    }
  }

  /** Watches from the current resourceVersion until the server ends the watch; false means re-list. */
  async #watchOnce(outer: AbortSignal): Promise<boolean> {
    const { clock } = this.#opts;
    // Not AbortSignal.any, which leaks on Node 20 when one input lives long (clock.ts).
    const local = childSignal(outer);
    let stalled = false;
    let watchdog: TimerHandle | undefined;
    const arm = () => {
      if (watchdog) clock.clearTimeout(watchdog);
      watchdog = clock.setTimeout(() => {
        stalled = true;
        this.stats.stalls++;
        local.abort();
      }, this.#opts.stallTimeoutMs);
    };
    arm();
    this.stats.watches++;
    try {
      const events = this.#client.watch<T>(this.#opts.apiVersion, this.#opts.kind, {
        namespace: this.#opts.namespace,
        labelSelector: this.#opts.labelSelector,
        resourceVersion: this.#resourceVersion,
        allowWatchBookmarks: true,
        timeoutSeconds: Math.max(1, Math.round(jitter(this.#opts.watchTimeoutSeconds, 0.2))),
        signal: local.signal,
      });
      for await (const event of events) {
        arm();
        if (event.type === 'ERROR') {
          const status = event.object as unknown as { code?: number; message?: string };
          if (status.code === 410) return false;
          throw new Error(`watch ${this.#opts.kind}: ${status.message ?? 'error event'}`);
        }
        if (event.type !== 'BOOKMARK') this.#apply(event.type, event.object);
        this.#resourceVersion = event.object.metadata.resourceVersion ?? this.#resourceVersion;
      }
      return true;
    } catch (err) {
      if (err instanceof ApiError && err.isGone) return false;
      if (local.signal.aborted) {
        if (stalled)
          throw new Error(`watch ${this.#opts.kind}: no event for ${this.#opts.stallTimeoutMs} ms`);
        return true;
      }
      throw err;
    } finally {
      if (watchdog) clock.clearTimeout(watchdog);
      local.detach();
      local.abort();
    }
  }

  async #loop(signal: AbortSignal): Promise<void> {
    const { clock } = this.#opts;
    let attempt = 0;
    while (!signal.aborted) {
      try {
        await this.#relist();
        attempt = 0;
        const listedAt = clock.now();
        while (!signal.aborted && clock.now() - listedAt < this.#opts.relistIntervalMs) {
          if (!(await this.#watchOnce(signal))) break;
        }
      } catch (err) {
        if (signal.aborted) break;
        attempt++;
        this.stats.errors++;
        this.#opts.onError?.(err as Error, attempt);
        const backoff = Math.min(this.#opts.maxBackoffMs, this.#opts.initialBackoffMs * 2 ** (attempt - 1));
        await clock.sleep(jitter(backoff, 0.2), signal);
      }
    }
  }
}
