import {
  Informer,
  type KubeClient,
  type KubeObject,
  type RuntimeLogger,
  withoutManagedFields,
} from '@mooring/runtime';

/** How long an informer nobody waits on stays open, so back-to-back waits share one list. */
const LINGER_MS = 60_000;
/** How long a first list may take before a waiter falls back to reading objects one by one. */
const SYNC_WAIT_MS = 5_000;
/**
 * At most this many watches at once (kinds × namespaces): a thousand Kustomizations in a thousand
 * namespaces must not hold a thousand watch connections; the waits beyond it poll.
 */
const MAX_OPEN = 64;
/** After a kind could not be listed or watched (RBAC, a broken API), poll it for this long. */
const REFUSED_MS = 60_000;

/** What a waiter hears: the object's newest version, or undefined when it was deleted. */
export type ObjectListener = (obj: KubeObject | undefined) => void;

interface Shared {
  informer: Informer<KubeObject>;
  synced: Promise<boolean>;
  listeners: Map<string, Set<ObjectListener>>;
  idleTimer?: ReturnType<typeof setTimeout>;
}

/**
 * One watch per kind and namespace answers every health wait on this cluster, instead of each
 * Kustomization reading its objects again and again while kube-controller-manager catches up
 * (at a thousand Kustomizations that polling was most of the API server's reads). The informer is
 * opened on the first wait for a kind, holds objects without their managedFields, and closes a
 * minute after its last waiter left; at most 64 are open at once. Only this operator's own cluster
 * is watched: a remote cluster's objects are read one by one, so a fleet does not multiply caches.
 */
export class HealthWatches {
  readonly client: KubeClient;
  readonly #log: RuntimeLogger | undefined;
  readonly #shared = new Map<string, Shared>();
  readonly #refusedUntil = new Map<string, number>();

  constructor(client: KubeClient, log?: RuntimeLogger) {
    this.client = client;
    this.#log = log;
  }

  /**
   * Calls `listener` with each new version of the object from now on; returns the version the
   * cache holds now (or undefined) and a function that stops listening. Resolves to undefined when
   * the kind cannot be watched here: the caller reads the object itself.
   */
  async subscribe(
    ref: { apiVersion: string; kind: string; namespace?: string; name: string },
    listener: ObjectListener,
  ): Promise<{ current: KubeObject | undefined; unsubscribe: () => void } | undefined> {
    const key = `${ref.apiVersion}/${ref.kind}/${ref.namespace ?? ''}`;
    if ((this.#refusedUntil.get(key) ?? 0) > Date.now()) return undefined;
    const existing = this.#shared.get(key);
    if (!existing && this.#shared.size >= MAX_OPEN) return undefined;
    const shared = existing ?? this.#open(key, ref);
    if (shared.idleTimer) clearTimeout(shared.idleTimer);
    shared.idleTimer = undefined;
    const name = ref.namespace ? `${ref.namespace}/${ref.name}` : ref.name;
    const set = shared.listeners.get(name) ?? new Set();
    set.add(listener);
    shared.listeners.set(name, set);
    const unsubscribe = () => {
      set.delete(listener);
      if (set.size === 0) shared.listeners.delete(name);
      if (shared.listeners.size === 0 && !shared.idleTimer) {
        shared.idleTimer = setTimeout(() => this.#close(key, shared), LINGER_MS);
        shared.idleTimer.unref?.();
      }
    };
    if (!(await shared.synced) && !shared.informer.hasSynced()) {
      unsubscribe();
      return undefined;
    }
    return { current: shared.informer.get(name), unsubscribe };
  }

  /** Stops every informer (the operator is shutting down). */
  async close(): Promise<void> {
    await Promise.all([...this.#shared].map(([key, shared]) => this.#close(key, shared)));
  }

  #open(key: string, ref: { apiVersion: string; kind: string; namespace?: string }): Shared {
    const informer = new Informer<KubeObject>(this.client, {
      apiVersion: ref.apiVersion,
      kind: ref.kind,
      namespace: ref.namespace || undefined,
      // kstatus reads status, generation and conditions.
      transform: withoutManagedFields,
      onError: (err) => {
        // Listing refused or broken: waiters poll this kind for a while instead.
        this.#log?.debug({ kind: ref.kind, err: err.message }, 'health watch failed; polling instead');
        this.#refusedUntil.set(key, Date.now() + REFUSED_MS);
        void this.#close(key, shared);
      },
    });
    const shared: Shared = {
      informer,
      listeners: new Map(),
      synced: Promise.race([
        informer.start().then(() => informer.hasSynced()),
        new Promise<boolean>((resolve) => setTimeout(() => resolve(false), SYNC_WAIT_MS).unref?.()),
      ]),
    };
    informer.on((event) => {
      const name = event.object.metadata.namespace
        ? `${event.object.metadata.namespace}/${event.object.metadata.name}`
        : (event.object.metadata.name ?? '');
      const listeners = shared.listeners.get(name);
      if (!listeners) return;
      const obj = event.type === 'deleted' ? undefined : event.object;
      for (const listener of [...listeners]) listener(obj);
    });
    this.#shared.set(key, shared);
    return shared;
  }

  async #close(key: string, shared: Shared): Promise<void> {
    if (this.#shared.get(key) !== shared) return;
    this.#shared.delete(key);
    if (shared.idleTimer) clearTimeout(shared.idleTimer);
    await shared.informer.stop();
  }
}
