import type { KubeClient } from '@mooring/runtime';
import { CliError, EXIT_ERROR } from './cli-error.ts';
import { apiVersionOf, matchKinds } from './kinds.ts';

/** A kind the API server serves, as discovery describes it. */
export interface ServedKind {
  apiVersion: string;
  kind: string;
  plural: string;
  namespaced: boolean;
}

interface ApiResource {
  name: string;
  singularName?: string;
  kind: string;
  namespaced: boolean;
  shortNames?: string[];
}

/** One group-version discovery document (`/api/v1`, `/apis/apps/v1`). */
export interface ResourceList {
  groupVersion: string;
  resources?: ApiResource[];
}

interface GroupList {
  groups?: {
    name: string;
    versions: { groupVersion: string }[];
    preferredVersion?: { groupVersion: string };
  }[];
}

/** Every spelling kubectl accepts for a resource: kind, plural, singular, short names, each optionally `.group` or `.version.group`. */
function spellings(r: ApiResource, groupVersion: string): string[] {
  const slash = groupVersion.indexOf('/');
  const group = slash < 0 ? '' : groupVersion.slice(0, slash);
  const version = groupVersion.slice(slash + 1);
  const bare = [r.kind, r.name, r.singularName ?? '', ...(r.shortNames ?? [])]
    .filter(Boolean)
    .map((s) => s.toLowerCase());
  if (!group) return [...bare, ...bare.map((b) => `${b}.${version}`)];
  return [...bare, ...bare.flatMap((b) => [`${b}.${group}`, `${b}.${version}.${group}`])];
}

/**
 * The first resource in `lists` that `word` names, in discovery order: the core group first,
 * then the groups in the API server's priority order, as kubectl resolves an ambiguous name.
 */
export function matchServedKind(word: string, lists: readonly ResourceList[]): ServedKind | undefined {
  const wanted = word.toLowerCase();
  for (const list of lists) {
    for (const r of list.resources ?? []) {
      if (r.name.includes('/')) continue; // subresources such as deployments/scale
      if (spellings(r, list.groupVersion).includes(wanted))
        return { apiVersion: list.groupVersion, kind: r.kind, plural: r.name, namespaced: r.namespaced };
    }
  }
  return undefined;
}

/** What the user named: a kind as typed, a name, and the API version a Mooring phrase implies. */
export interface TraceTarget {
  kind: string;
  name: string;
  apiVersion?: string;
}

/** Reads `<kind> <name>`, `<Kind>/<name>` or a Mooring phrase such as `source git <name>`. */
export function parseTraceTarget(words: readonly string[]): TraceTarget {
  const [first = '', second] = words;
  const slash = first.indexOf('/');
  if (words.length === 1 && slash > 0 && slash < first.length - 1)
    return { kind: first.slice(0, slash), name: first.slice(slash + 1) };
  if (words.length === 2 && slash < 0 && second) return { kind: first, name: second };
  const phrase = words.length === 3 ? matchKinds([...words], false) : undefined;
  const def = phrase?.kinds[0];
  if (def && phrase.rest.length === 1)
    return { kind: def.kind, name: phrase.rest[0]!, apiVersion: apiVersionOf(def) };
  throw new CliError(
    `give one kind and one name, e.g. 'mooring trace deployment web -n apps' or 'mooring trace Deployment/web'.`,
    EXIT_ERROR,
  );
}

const pathOf = (groupVersion: string): string =>
  groupVersion.includes('/') ? `/apis/${groupVersion}` : `/api/${groupVersion}`;

/** The group-versions worth reading for `word`: preferred versions, plus every version of a group the word names. */
async function groupVersionsFor(client: KubeClient, word: string): Promise<string[]> {
  // Unguarded: an unreachable API server must fail here with its own error.
  const apis = await client.request<GroupList>({ method: 'GET', path: '/apis' });
  const lower = word.toLowerCase();
  const out = ['v1'];
  for (const g of apis.groups ?? []) {
    const named = lower.endsWith(`.${g.name}`);
    if (named) out.push(...g.versions.map((v) => v.groupVersion));
    else if (g.preferredVersion) out.push(g.preferredVersion.groupVersion);
  }
  return [...new Set(out)];
}

/**
 * Resolves a kubectl-style kind (`deploy`, `Deployment`, `deployments.apps`, `ks`) through the
 * API server's discovery, limited to `apiVersion` when given. An unknown kind is a usage error.
 */
export async function resolveKind(
  client: KubeClient,
  word: string,
  apiVersion?: string,
): Promise<ServedKind> {
  const groupVersions = apiVersion ? [apiVersion] : await groupVersionsFor(client, word);
  // One unavailable aggregated API (metrics.k8s.io answering 503) must not hide every other kind.
  const lists = await Promise.all(
    groupVersions.map((gv) =>
      client
        .request<ResourceList>({ method: 'GET', path: pathOf(gv) })
        .then((list) => ({ ...list, groupVersion: gv }))
        .catch((): ResourceList => ({ groupVersion: gv })),
    ),
  );
  const found = matchServedKind(word, lists);
  if (found) return found;
  throw new CliError(
    `the cluster serves no kind '${word}'${apiVersion ? ` in ${apiVersion}` : ''}: check the spelling, or list the kinds with 'kubectl api-resources'.`,
    EXIT_ERROR,
  );
}
