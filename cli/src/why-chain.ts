import { KINDS } from '@mooring/api';
import {
  type AppliedHealth,
  type ChainObject,
  computeStatus,
  type LiveObject,
  type WhyBlocked,
  whyBlocked,
} from '@mooring/kstatus';
import type { KubeClient, KubeObject } from '@mooring/runtime';
import { parseInventoryId } from './commands/tree.ts';
import { apiVersionOf } from './kinds.ts';

// An inventory of thousands is judged by its first 200 objects, each one a GET.
const MAX_HEALTH_READS = 200;
// Each round reads at least one object the chain needs; a chain is never this long.
const MAX_ROUNDS = 64;

const keyOf = (kind: string, namespace: string, name: string) => `${kind}/${namespace}/${name}`;

interface HealthCheckRef {
  apiVersion?: string;
  kind: string;
  name: string;
  namespace?: string;
}

/** What an object's health wait reads: its `healthChecks`, else (with `wait`, or a HelmRelease) its inventory. */
function healthTargets(
  obj: ChainObject,
): { apiVersion: string; kind: string; namespace: string; name: string }[] {
  const namespace = obj.metadata.namespace ?? '';
  const spec = (obj.spec ?? {}) as { wait?: boolean; healthChecks?: HealthCheckRef[] };
  if (spec.healthChecks?.length && !spec.wait)
    return spec.healthChecks.map((h) => ({
      apiVersion: h.apiVersion ?? 'v1',
      kind: h.kind,
      namespace: h.namespace ?? namespace,
      name: h.name,
    }));
  if (obj.kind === 'Kustomization' && !spec.wait) return [];
  const entries = (obj.status as { inventory?: { entries?: { id: string; v: string }[] } } | undefined)
    ?.inventory?.entries;
  return (entries ?? [])
    .map((e) => parseInventoryId(e.id, e.v))
    .filter((r) => r !== undefined)
    .map((r) => ({
      apiVersion: r.group ? `${r.group}/${r.version}` : r.version,
      kind: r.kind,
      namespace: r.namespace,
      name: r.name,
    }));
}

/** The live kstatus of what `obj` waits on (a missing object is NotFound). */
async function readHealth(client: KubeClient, obj: ChainObject): Promise<AppliedHealth[]> {
  return Promise.all(
    healthTargets(obj)
      .slice(0, MAX_HEALTH_READS)
      .map(async (t): Promise<AppliedHealth> => {
        const base = { kind: t.kind, namespace: t.namespace, name: t.name };
        try {
          const live = await client.getOrUndefined({ ...t, namespace: t.namespace || undefined });
          if (!live) return { ...base, status: 'NotFound', message: 'not on the cluster' };
          const s = computeStatus(live as unknown as LiveObject);
          return { ...base, status: s.status, message: s.message };
        } catch (err) {
          return { ...base, status: 'Unknown', message: (err as Error).message };
        }
      }),
  );
}

/**
 * `mooring why`'s chain over the live cluster: the shared `whyBlocked`, fed in rounds with the
 * objects and health it asked for and did not have yet, so only what the chain touches is read.
 */
export async function whyBlockedLive(client: KubeClient, obj: KubeObject): Promise<WhyBlocked | undefined> {
  const objects = new Map<string, ChainObject | undefined>([
    [keyOf(obj.kind, obj.metadata.namespace ?? '', obj.metadata.name ?? ''), obj],
  ]);
  const health = new Map<string, AppliedHealth[]>();
  for (let round = 0; ; round++) {
    const wanted = new Map<string, { kind: string; namespace: string; name: string }>();
    const wantedHealth = new Map<string, ChainObject>();
    const why = whyBlocked(
      obj,
      (kind, namespace, name) => {
        const key = keyOf(kind, namespace, name);
        if (!objects.has(key)) wanted.set(key, { kind, namespace, name });
        return objects.get(key);
      },
      (o) => {
        const key = keyOf(o.kind ?? '', o.metadata.namespace ?? '', o.metadata.name ?? '');
        if (!health.has(key)) wantedHealth.set(key, o);
        return health.get(key);
      },
    );
    if ((wanted.size === 0 && wantedHealth.size === 0) || round >= MAX_ROUNDS) return why;
    await Promise.all([
      ...[...wanted].map(async ([key, ref]) => {
        const def = KINDS.find((k) => k.kind === ref.kind);
        const found = def
          ? await client.getOrUndefined({ apiVersion: apiVersionOf(def), ...ref })
          : undefined;
        // The API server's answer has no kind on a typed GET in some versions; the chain keys on it.
        objects.set(key, found && { ...found, kind: ref.kind });
      }),
      ...[...wantedHealth].map(async ([key, o]) => {
        health.set(key, await readHealth(client, o));
      }),
    ]);
  }
}
