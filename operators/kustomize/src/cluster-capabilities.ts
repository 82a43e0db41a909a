// Helm's `.Capabilities` for a target cluster, from its discovery as helm-controller reads them
// (action.GetVersionSet): the server's git version, and every group/version it serves plus every
// group/version/Kind. Read only when a chart renders, and kept per target client for a while:
// a cluster's version and APIs change rarely, and discovery is one request per group/version.
import type { KubeClient } from '@mooring/runtime';
import type { HelmCapabilities } from './render/index.ts';

interface GroupList {
  groups?: { versions?: { groupVersion?: string }[] }[];
}
interface ResourceList {
  resources?: { kind?: string; name?: string }[];
}

/** Reads the target's version and API versions (the same set `helm install` would see). */
export async function discoverCapabilities(client: KubeClient): Promise<HelmCapabilities> {
  const version = await client.request<{ gitVersion?: string }>({ method: 'GET', path: '/version' });
  const core = await client.request<{ versions?: string[] }>({ method: 'GET', path: '/api' });
  const groups = await client.request<GroupList>({ method: 'GET', path: '/apis' });
  const groupVersions = [
    ...(core.versions ?? []),
    ...(groups.groups ?? []).flatMap((g) => (g.versions ?? []).map((v) => v.groupVersion ?? '')),
  ].filter((gv) => gv !== '');
  const set = new Set(groupVersions);
  const lists = await Promise.all(
    groupVersions.map((gv) =>
      client.request<ResourceList>({ method: 'GET', path: gv.includes('/') ? `/apis/${gv}` : `/api/${gv}` }),
    ),
  );
  lists.forEach((list, i) => {
    for (const r of list.resources ?? []) {
      // Subresources (pods/log) carry their parent's kind or another; helm lists kinds as served.
      if (r.kind) set.add(`${groupVersions[i]}/${r.kind}`);
    }
  });
  return { kubeVersion: version.gitVersion ?? '', apiVersions: [...set].sort() };
}

/** Capabilities per target client, each read at most once per `ttlMs` (a failed read is not kept). */
export class CapabilitiesCache {
  readonly #entries = new WeakMap<KubeClient, { at: number; value: Promise<HelmCapabilities> }>();
  readonly #ttlMs: number;
  readonly #now: () => number;
  readonly #discover: (client: KubeClient) => Promise<HelmCapabilities>;

  constructor(
    ttlMs = 10 * 60_000,
    now: () => number = () => performance.now(),
    discover: (client: KubeClient) => Promise<HelmCapabilities> = discoverCapabilities,
  ) {
    this.#ttlMs = ttlMs;
    this.#now = now;
    this.#discover = discover;
  }

  /** A lazy reader of `client`'s capabilities, for the render's Helm settings. */
  for(client: KubeClient): () => Promise<HelmCapabilities> {
    return () => {
      const cached = this.#entries.get(client);
      if (cached && this.#now() - cached.at < this.#ttlMs) return cached.value;
      const value = this.#discover(client);
      this.#entries.set(client, { at: this.#now(), value });
      value.catch(() => {
        if (this.#entries.get(client)?.value === value) this.#entries.delete(client);
      });
      return value;
    };
  }
}
