/** Where a kind lives in the REST API. */
export interface ResourceMapping {
  group: string;
  version: string;
  kind: string;
  plural: string;
  namespaced: boolean;
  subresources: string[];
}

interface ApiResource {
  name: string;
  kind: string;
  namespaced: boolean;
}

/** Fetches one discovery document; injected so the mapper stays independent of the transport. */
export type DiscoveryFetch = (path: string) => Promise<{ resources?: ApiResource[] }>;

/** Splits `apps/v1` into group `apps`, version `v1`; the core group is the empty string. */
export function splitApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf('/');
  return slash < 0
    ? { group: '', version: apiVersion }
    : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

/**
 * Maps apiVersion+kind to plural and scope through discovery, one group-version document at a
 * time and cached. A kind that is not found re-reads its group-version once, because a CRD may
 * have been installed since; `invalidate()` drops everything (call it after applying CRDs).
 */
export class RestMapper {
  readonly #fetch: DiscoveryFetch;
  readonly #cache = new Map<string, Promise<Map<string, ResourceMapping>>>();

  constructor(fetch: DiscoveryFetch) {
    this.#fetch = fetch;
  }

  async map(apiVersion: string, kind: string): Promise<ResourceMapping> {
    const found = (await this.#load(apiVersion, false)).get(kind);
    if (found) return found;
    const fresh = (await this.#load(apiVersion, true)).get(kind);
    if (fresh) return fresh;
    throw new NoKindMatchError(apiVersion, kind);
  }

  invalidate(apiVersion?: string): void {
    if (apiVersion === undefined) this.#cache.clear();
    else this.#cache.delete(apiVersion);
  }

  #load(apiVersion: string, refresh: boolean): Promise<Map<string, ResourceMapping>> {
    let entry = refresh ? undefined : this.#cache.get(apiVersion);
    if (!entry) {
      entry = this.#discover(apiVersion);
      this.#cache.set(apiVersion, entry);
      // A failed discovery must not stick in the cache.
      entry.catch(() => this.#cache.delete(apiVersion));
    }
    return entry;
  }

  async #discover(apiVersion: string): Promise<Map<string, ResourceMapping>> {
    const { group, version } = splitApiVersion(apiVersion);
    const path = group === '' ? `/api/${version}` : `/apis/${group}/${version}`;
    let doc: { resources?: ApiResource[] };
    try {
      doc = await this.#fetch(path);
    } catch (err) {
      if ((err as { statusCode?: number }).statusCode === 404) return new Map();
      throw err;
    }
    const resources = doc.resources ?? [];
    const byKind = new Map<string, ResourceMapping>();
    for (const r of resources) {
      if (r.name.includes('/')) continue;
      const subresources = resources
        .filter((s) => s.name.startsWith(`${r.name}/`))
        .map((s) => s.name.slice(r.name.length + 1));
      byKind.set(r.kind, {
        group,
        version,
        kind: r.kind,
        plural: r.name,
        namespaced: r.namespaced,
        subresources,
      });
    }
    return byKind;
  }
}

/** The API server has no such kind (a CRD missing or not yet established). */
export class NoKindMatchError extends Error {
  constructor(apiVersion: string, kind: string) {
    super(`no kind ${kind} is registered for ${apiVersion}: is its CRD installed?`);
    this.name = 'NoKindMatchError';
  }
}
