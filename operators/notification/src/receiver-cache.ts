import { NOTIFICATION_API_VERSION, type Receiver } from '@mooring/api';
import { Informer, type KubeClient, type KubeObject, objectKey, type WatchEvent } from '@mooring/runtime';
import { webhookPath } from './webhook-path.ts';

/** A Receiver the webhook server can answer for, with its current token. */
export interface CachedReceiver {
  namespace: string;
  name: string;
  receiver: Receiver;
  token: string;
}

/** What the webhook server asks on every request: one Map lookup, no API call. */
export interface ReceiverLookup {
  /** True once both informers have listed: before that an unknown path may be a real one. */
  synced(): boolean;
  lookup(path: string): CachedReceiver | undefined;
}

type TokenSecret = KubeObject & { data?: { token?: string } };

/**
 * Secrets as the cache keeps them: the name, the resourceVersion the informer resumes from and
 * the `token` key. Every Secret in the watched namespaces is listed (which ones Receivers name
 * changes at any time), so whatever else they hold (Helm releases, certificates, kubectl's
 * last-applied copy) is dropped on arrival instead of sitting in this process's heap.
 */
function tokenOnly(s: TokenSecret): TokenSecret {
  const { name, namespace, resourceVersion, uid } = s.metadata;
  const token = s.data?.token;
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace, resourceVersion, uid },
    ...(token === undefined ? {} : { data: { token } }),
  };
}

/** The client the Secret informer lists and watches through: every other call passes untouched. */
function tokenOnlyClient(client: KubeClient): KubeClient {
  const list: KubeClient['list'] = async (...args) => {
    const l = await client.list<TokenSecret>(...args);
    return { ...l, items: l.items.map(tokenOnly) } as never;
  };
  const watch = async function* (...args: Parameters<KubeClient['watch']>) {
    for await (const e of client.watch<TokenSecret>(...args)) {
      yield (
        e.type === 'ADDED' || e.type === 'MODIFIED' || e.type === 'DELETED'
          ? { type: e.type, object: tokenOnly(e.object) }
          : e
      ) as WatchEvent<never>;
    }
  } as KubeClient['watch'];
  return new Proxy(client, {
    get(target, prop) {
      if (prop === 'list') return list;
      if (prop === 'watch') return watch;
      const v = Reflect.get(target, prop, target) as unknown;
      // Bound to the real client: its methods use private fields a proxy does not have.
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

export interface ReceiverCacheOptions {
  /** `--watch-namespace`: Receivers and Secrets of this namespace only. */
  namespace?: string;
  /** `--watch-label-selector`: the Receivers of this shard (Secrets are not labelled for shards). */
  labelSelector?: string;
  onError?: (err: Error) => void;
}

/**
 * Receivers and their tokens, kept current by two informers (Receivers, Secrets) so a webhook
 * request costs no API read: a flood can no longer spend the client rate limit every reconcile in
 * the process shares, and a token rotation or a deleted Receiver takes effect when its watch event
 * arrives. Paths are computed here from the token (Flux's `/hook/<sha256(token+name+namespace)>`),
 * so a path from an old token is unknown as soon as the Secret changes.
 */
export class ReceiverCache implements ReceiverLookup {
  readonly #receivers: Informer<Receiver>;
  readonly #secrets: Informer<TokenSecret>;
  readonly #entries = new Map<string, CachedReceiver & { path: string }>();
  readonly #byPath = new Map<string, string>();
  /** Secret key → keys of the Receivers naming it. */
  readonly #bySecret = new Map<string, Set<string>>();
  /** Receiver key → the Secret key it was filed under. */
  readonly #secretOf = new Map<string, string>();

  constructor(client: KubeClient, options: ReceiverCacheOptions = {}) {
    const onError = options.onError ? (err: Error) => options.onError?.(err) : undefined;
    this.#receivers = new Informer<Receiver>(client, {
      apiVersion: NOTIFICATION_API_VERSION,
      kind: 'Receiver',
      namespace: options.namespace,
      labelSelector: options.labelSelector,
      onError,
    });
    this.#secrets = new Informer<TokenSecret>(tokenOnlyClient(client), {
      apiVersion: 'v1',
      kind: 'Secret',
      namespace: options.namespace,
      onError,
    });
    this.#receivers.on((e) => this.#refresh(objectKey(e.object)));
    this.#secrets.on((e) => {
      // A copy: refreshing a Receiver takes it out of this set and puts it back, which a live
      // iteration would visit again, for ever.
      for (const key of [...(this.#bySecret.get(objectKey(e.object)) ?? [])]) this.#refresh(key);
    });
  }

  /** Starts both informers; resolves when both have listed. */
  async start(): Promise<void> {
    await Promise.all([this.#receivers.start(), this.#secrets.start()]);
  }

  async stop(): Promise<void> {
    await Promise.all([this.#receivers.stop(), this.#secrets.stop()]);
  }

  synced(): boolean {
    return this.#receivers.hasSynced() && this.#secrets.hasSynced();
  }

  lookup(path: string): CachedReceiver | undefined {
    const key = this.#byPath.get(path);
    return key === undefined ? undefined : this.#entries.get(key);
  }

  get size(): number {
    return this.#entries.size;
  }

  /** Recomputes one Receiver's entry from the informers' current objects. */
  #refresh(key: string): void {
    const old = this.#entries.get(key);
    if (old && this.#byPath.get(old.path) === key) this.#byPath.delete(old.path);
    this.#entries.delete(key);
    const oldSecret = this.#secretOf.get(key);
    if (oldSecret !== undefined) {
      this.#bySecret.get(oldSecret)?.delete(key);
      if (this.#bySecret.get(oldSecret)?.size === 0) this.#bySecret.delete(oldSecret);
      this.#secretOf.delete(key);
    }
    const receiver = this.#receivers.get(key);
    if (!receiver) return;
    const namespace = receiver.metadata.namespace ?? '';
    const name = receiver.metadata.name ?? '';
    const secretName = receiver.spec.secretRef?.name;
    if (!secretName) return;
    const secretKey = `${namespace}/${secretName}`;
    const users = this.#bySecret.get(secretKey) ?? new Set<string>();
    this.#bySecret.set(secretKey, users.add(key));
    this.#secretOf.set(key, secretKey);
    const encoded = this.#secrets.get(secretKey)?.data?.token;
    const token = encoded === undefined ? '' : Buffer.from(encoded, 'base64').toString('utf8');
    if (!token) return;
    const path = webhookPath(token, name, namespace);
    this.#entries.set(key, { namespace, name, receiver, token, path });
    this.#byPath.set(path, key);
  }
}
