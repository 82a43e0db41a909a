// Helm's release history in its own storage (the secrets driver), read and written through
// Mooring's KubeClient as the HelmRelease's identity, so `helm ls`, `helm history` and `helm get`
// show what Mooring wrote, and Mooring reads what `helm install` or Flux wrote.
import { ApiError, type Impersonation, type KubeClient } from '@mooring/runtime';
import type { ReleaseRecord } from './release-record.ts';
import {
  decodeReleaseSecret,
  encodeReleaseSecret,
  ReleaseRecordError,
  type ReleaseSecret,
  releaseSecretName,
} from './release-secret.ts';

export interface ReleaseStoreOptions {
  /** The storage namespace: where the records live (Flux's `storageNamespace`). */
  namespace: string;
  /** Who reads and writes the records: the HelmRelease's service account, as for its objects. */
  impersonate?: Impersonation;
  /** The time Helm's createdAt/modifiedAt labels record; the real clock unless a test gives one. */
  now?: () => Date;
}

/** A record of this name and version exists already: another writer got there first. */
export class ReleaseExistsError extends Error {
  override name = 'ReleaseExistsError';
}

/** Kubernetes' label value syntax, which Helm checks release names against before a query. */
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/**
 * A release's records in one storage namespace. Every error names the record, never its data;
 * a record that cannot be decoded fails the read (ReleaseRecordError) rather than vanishing from
 * the history, so no revision number is reused.
 */
export class ReleaseStore {
  readonly namespace: string;
  readonly #client: KubeClient;
  readonly #impersonate: Impersonation | undefined;
  readonly #now: () => Date;

  constructor(client: KubeClient, options: ReleaseStoreOptions) {
    this.#client = client;
    this.namespace = options.namespace;
    this.#impersonate = options.impersonate;
    this.#now = options.now ?? (() => new Date());
  }

  #secretsPath(name?: string): string {
    const base = `/api/v1/namespaces/${encodeURIComponent(this.namespace)}/secrets`;
    return name === undefined ? base : `${base}/${encodeURIComponent(name)}`;
  }

  /** Every record of release `name`, oldest version first (Helm lists by owner=helm,name=<name>). */
  async history(name: string): Promise<ReleaseRecord[]> {
    if (name.length > 63 || !LABEL_VALUE.test(name))
      throw new ReleaseRecordError(`release name ${JSON.stringify(name)} is not a valid label value`);
    const list = await this.#client.list<ReleaseSecret & { metadata: { name: string } }>('v1', 'Secret', {
      namespace: this.namespace,
      labelSelector: `owner=helm,name=${name}`,
      impersonate: this.#impersonate,
    });
    return list.items.map((s) => decodeReleaseSecret(s)).sort((a, b) => a.version - b.version);
  }

  /** The newest record whatever its status (Helm's Last), or undefined when there is none. */
  async latest(name: string): Promise<ReleaseRecord | undefined> {
    return (await this.history(name)).at(-1);
  }

  /** The newest deployed record (Helm's Deployed: the last one should several say deployed). */
  async lastDeployed(name: string): Promise<ReleaseRecord | undefined> {
    return (await this.history(name)).filter((r) => r.info.status === 'deployed').at(-1);
  }

  /** Writes a new record; a record of the same version already there is a ReleaseExistsError. */
  async create(record: ReleaseRecord): Promise<void> {
    const secret = encodeReleaseSecret(record, { namespace: this.namespace, createdAt: this.#now() });
    try {
      await this.#client.request({
        method: 'POST',
        path: this.#secretsPath(),
        body: secret,
        impersonate: this.#impersonate,
      });
    } catch (err) {
      if (err instanceof ApiError && err.statusCode === 409)
        throw new ReleaseExistsError(
          `release record ${this.namespace}/${secret.metadata.name} exists already: another writer created version ${record.version}`,
        );
      throw this.#named(err, 'create', secret.metadata.name);
    }
  }

  /**
   * Replaces a record whole (its status label and data), as Helm's driver Update does: the
   * createdAt label goes and modifiedAt is set. A record that is not there is an error.
   */
  async update(record: ReleaseRecord): Promise<void> {
    const secret = encodeReleaseSecret(record, { namespace: this.namespace, modifiedAt: this.#now() });
    try {
      await this.#client.request({
        method: 'PUT',
        path: this.#secretsPath(secret.metadata.name),
        body: secret,
        impersonate: this.#impersonate,
      });
    } catch (err) {
      throw this.#named(err, 'update', secret.metadata.name);
    }
  }

  /** Deletes one record; returns whether it was there. */
  async remove(name: string, version: number): Promise<boolean> {
    const secretName = releaseSecretName(name, version);
    try {
      await this.#client.request({
        method: 'DELETE',
        path: this.#secretsPath(secretName),
        impersonate: this.#impersonate,
      });
      return true;
    } catch (err) {
      if (err instanceof ApiError && err.isNotFound) return false;
      throw this.#named(err, 'delete', secretName);
    }
  }

  /**
   * Helm's max history, as its storage applies it before writing a revision (pkg/storage Create
   * and removeLeastRecent): with `maxHistory` > 0, deletes the oldest records until there is room
   * for one more within `maxHistory`, never the last deployed one. 0 keeps everything, as
   * `helm upgrade --history-max 0` does. Call it before create(). Returns the deleted versions.
   */
  async prune(name: string, maxHistory: number): Promise<number[]> {
    if (maxHistory <= 0) return [];
    const keep = maxHistory - 1;
    const history = await this.history(name);
    if (history.length <= keep) return [];
    const deployed = history.filter((r) => r.info.status === 'deployed').at(-1);
    const doomed: number[] = [];
    for (const r of history) {
      if (history.length - doomed.length === keep) break;
      if (r.version !== deployed?.version) doomed.push(r.version);
    }
    for (const version of doomed) await this.remove(name, version);
    return doomed;
  }

  /** The API's error with the record named; the API never echoes a Secret's data in its message. */
  #named(err: unknown, verb: string, secretName: string): Error {
    const reason =
      err instanceof ApiError
        ? `${err.statusCode} ${err.reason || err.status?.message || ''}`.trim()
        : String(err);
    return new ReleaseRecordError(`cannot ${verb} release record ${this.namespace}/${secretName}: ${reason}`);
  }
}
