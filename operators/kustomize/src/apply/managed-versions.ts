import { Informer, type KubeClient, type KubeObject, type RuntimeLogger } from '@mooring/runtime';

/** At most this many kinds are followed; objects of further kinds are read one by one. */
const MAX_KINDS = 64;
/** After a kind could not be listed or watched (RBAC, a broken API), it is read again for this long. */
const REFUSED_MS = 10 * 60_000;

export interface VersionedRef {
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
}

/**
 * Something other than a status write happened to a managed object: it was deleted (or lost its
 * owner label), or its spec changed (a new generation; any new version for kinds without one).
 */
export interface ManagedChange {
  ref: VersionedRef;
  /** The new version; undefined when the object went away. */
  version: string | undefined;
  /** The object's labels that name its owner (the ones passed as `ownerLabels`). */
  labels: Record<string, string>;
}

export type ManagedChangeListener = (change: ManagedChange) => void;

interface Followed {
  informer: Informer<KubeObject>;
  /** Settled once the first list is in; versions are answered only after it. */
  started: Promise<void>;
}

/**
 * The newest resourceVersion of every object this operator applied, from one watch per kind over
 * the whole cluster, narrowed to objects that carry `labelSelector` (the owner label the render
 * puts on everything it applies). A no-op pass asks it instead of reading each object: the same
 * version we last applied or found equal means nothing drifted, so there is nothing to read, dry-run
 * or judge again. The cache keeps only name, namespace and version (a few hundred bytes an object):
 * the objects themselves are never held, so the operator's memory grows little with what it manages.
 * A kind is followed from its first apply on; a kind that cannot be watched is read one by one.
 * Changes other than status writes are told to `onChange` listeners, so drift wakes its owner.
 */
export class ManagedVersions {
  readonly client: KubeClient;
  readonly #labelSelector: string;
  readonly #ownerLabels: readonly string[];
  readonly #log: RuntimeLogger | undefined;
  readonly #listeners: ManagedChangeListener[] = [];
  readonly #followed = new Map<string, Followed>();
  readonly #refusedUntil = new Map<string, number>();
  #closed = false;

  constructor(
    client: KubeClient,
    opts: { labelSelector: string; ownerLabels: readonly string[]; log?: RuntimeLogger },
  ) {
    this.client = client;
    this.#labelSelector = opts.labelSelector;
    this.#ownerLabels = opts.ownerLabels;
    this.#log = opts.log;
  }

  /** Hears every change that is not only a status write, on every followed kind. */
  onChange(listener: ManagedChangeListener): void {
    this.#listeners.push(listener);
  }

  /**
   * The version the watch holds for the object; undefined while its kind is not followed or not
   * yet listed, and when the object is not there (deleted, or not labelled as ours): read it then.
   */
  versionOf(ref: VersionedRef): string | undefined {
    const followed = this.#followed.get(kindKey(ref));
    if (!followed?.informer.hasSynced()) return undefined;
    const key = ref.namespace ? `${ref.namespace}/${ref.name}` : ref.name;
    return followed.informer.get(key)?.metadata.resourceVersion;
  }

  /** Starts following the kind (once), so later passes can answer from the watch. */
  follow(ref: { apiVersion: string; kind: string }): void {
    const key = kindKey(ref);
    if (this.#closed || this.#followed.has(key) || this.#followed.size >= MAX_KINDS) return;
    if ((this.#refusedUntil.get(key) ?? 0) > Date.now()) return;
    const informer = new Informer<KubeObject>(this.client, {
      apiVersion: ref.apiVersion,
      kind: ref.kind,
      labelSelector: this.#labelSelector,
      transform: (obj) => versionOnly(obj, this.#ownerLabels),
      onError: (err) => {
        // Listing refused or broken: this kind is read object by object for a while instead.
        this.#log?.debug(
          { kind: ref.kind, err: err.message },
          'version watch failed; reading objects instead',
        );
        this.#refusedUntil.set(key, Date.now() + REFUSED_MS);
        void this.#unfollow(key, followed);
      },
    });
    informer.on((event) => {
      // The first list is not news; a status write (same generation) is not drift.
      if (!informer.hasSynced() || event.type === 'added') return;
      const { metadata } = event.object;
      if (event.type === 'updated' && !specChanged(event.old, event.object)) return;
      const change: ManagedChange = {
        ref: {
          apiVersion: ref.apiVersion,
          kind: ref.kind,
          name: metadata.name ?? '',
          ...(metadata.namespace ? { namespace: metadata.namespace } : {}),
        },
        version: event.type === 'deleted' ? undefined : metadata.resourceVersion,
        labels: { ...event.old?.metadata.labels, ...metadata.labels },
      };
      for (const listener of this.#listeners) listener(change);
    });
    const followed: Followed = { informer, started: informer.start() };
    // The first list's failure is reported through onError; the promise must not reject unheard.
    followed.started.catch(() => undefined);
    this.#followed.set(key, followed);
  }

  /** Stops every watch (the operator is shutting down). */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all([...this.#followed].map(([key, followed]) => this.#unfollow(key, followed)));
  }

  async #unfollow(key: string, followed: Followed): Promise<void> {
    if (this.#followed.get(key) !== followed) return;
    this.#followed.delete(key);
    await followed.informer.stop();
  }
}

function kindKey(ref: { apiVersion: string; kind: string }): string {
  return `${ref.apiVersion}/${ref.kind}`;
}

/** Kinds with a status subresource count spec changes in `generation`; others change only by edits. */
function specChanged(old: KubeObject | undefined, now: KubeObject): boolean {
  if (!old) return true;
  const before = old.metadata.generation;
  const after = now.metadata.generation;
  if (before !== undefined || after !== undefined) return before !== after;
  return old.metadata.resourceVersion !== now.metadata.resourceVersion;
}

/** All a version check needs: which object, its version and generation, and who owns it. */
function versionOnly(obj: KubeObject, ownerLabels: readonly string[]): KubeObject {
  const { name, namespace, resourceVersion, generation, labels } = obj.metadata;
  const owner: Record<string, string> = {};
  for (const label of ownerLabels) if (labels?.[label] !== undefined) owner[label] = labels[label];
  return {
    apiVersion: obj.apiVersion,
    kind: obj.kind,
    metadata: {
      name,
      resourceVersion,
      labels: owner,
      ...(namespace ? { namespace } : {}),
      ...(generation !== undefined ? { generation } : {}),
    },
  } as KubeObject;
}
