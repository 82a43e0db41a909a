import { computeStatus, type LiveObject } from '@mooring/kstatus';
import type { KubeClient, KubeObject } from '@mooring/runtime';
import { parseInventoryId } from '../commands/tree.ts';
import { readyCondition, revisionOf } from '../object-status.ts';
import { commitLink } from './commit-link.ts';
import { type FleetView, fleetView, fleetWhy } from './fleet-view.ts';
import type { ObjectIndex } from './object-index.ts';
import { type AppliedHealth, type Explanation, whyNotApplied } from './why-not-applied.ts';

/** An event about the object, newest first. */
export interface EventRow {
  type: string;
  reason: string;
  message: string;
  count: number;
  lastSeen: string;
}

/** Everything the object page shows. */
export interface ObjectDetail {
  kind: string;
  namespace: string;
  name: string;
  suspended: boolean;
  conditions: {
    type: string;
    status: string;
    reason?: string;
    message?: string;
    lastTransitionTime?: string;
  }[];
  events: EventRow[];
  history: unknown[];
  inventory: AppliedHealth[];
  revision: string;
  source?: {
    kind: string;
    namespace: string;
    name: string;
    url?: string;
    revision?: string;
    commitUrl?: string;
  };
  dependsOn: { kind: string; namespace: string; name: string }[];
  why?: Explanation;
  /** A KustomizationSet's rollout and members. */
  fleet?: FleetView;
  /** The object without managedFields, as YAML would show it. */
  object: KubeObject;
}

interface Ref {
  kind?: string;
  name: string;
  namespace?: string;
}

/** The kstatus of each object in the inventory, read live as the user (a missing one is NotFound). */
async function inventoryHealth(client: KubeClient, obj: KubeObject): Promise<AppliedHealth[]> {
  const entries = (obj.status as { inventory?: { entries?: { id: string; v: string }[] } } | undefined)
    ?.inventory?.entries;
  const refs = (entries ?? []).map((e) => parseInventoryId(e.id, e.v)).filter((r) => r !== undefined);
  // Bounded: an inventory of thousands is shown by its first 200, each one a GET.
  return Promise.all(
    refs.slice(0, 200).map(async (ref): Promise<AppliedHealth> => {
      const base = { kind: ref.kind, namespace: ref.namespace, name: ref.name };
      try {
        const live = await client.getOrUndefined({
          apiVersion: ref.group ? `${ref.group}/${ref.version}` : ref.version,
          kind: ref.kind,
          namespace: ref.namespace || undefined,
          name: ref.name,
        });
        if (!live) return { ...base, status: 'NotFound', message: 'not on the cluster' };
        const s = computeStatus(live as unknown as LiveObject);
        return { ...base, status: s.status, message: s.message };
      } catch (err) {
        return { ...base, status: 'Unknown', message: (err as Error).message };
      }
    }),
  );
}

async function eventsOf(client: KubeClient, obj: KubeObject): Promise<EventRow[]> {
  const list = await client.list('v1', 'Event', {
    namespace: obj.metadata.namespace,
    fieldSelector: `involvedObject.name=${obj.metadata.name},involvedObject.kind=${obj.kind}`,
  });
  type Ev = KubeObject & {
    type?: string;
    reason?: string;
    message?: string;
    count?: number;
    lastTimestamp?: string;
    eventTime?: string;
  };
  return (list.items as Ev[])
    .map((e) => ({
      type: e.type ?? '',
      reason: e.reason ?? '',
      message: e.message ?? '',
      count: e.count ?? 1,
      lastSeen: e.lastTimestamp ?? e.eventTime ?? e.metadata.creationTimestamp ?? '',
    }))
    .sort((a, b) => b.lastSeen.localeCompare(a.lastSeen))
    .slice(0, 50);
}

/** The object page of `kind namespace/name`, or undefined when the index does not hold it. */
export async function objectDetail(
  client: KubeClient,
  index: ObjectIndex,
  kind: string,
  namespace: string,
  name: string,
): Promise<ObjectDetail | undefined> {
  const obj = index.get(kind, namespace, name);
  if (!obj) return undefined;
  const [events, inventory] = await Promise.all([
    eventsOf(client, obj).catch(() => []),
    inventoryHealth(client, obj),
  ]);
  const status = (obj.status ?? {}) as { conditions?: ObjectDetail['conditions']; history?: unknown[] };
  const spec = (obj.spec ?? {}) as { sourceRef?: Ref; dependsOn?: Ref[]; suspend?: boolean; url?: string };
  let source: ObjectDetail['source'];
  if (spec.sourceRef?.kind) {
    const ref = {
      kind: spec.sourceRef.kind,
      namespace: spec.sourceRef.namespace ?? namespace,
      name: spec.sourceRef.name,
    };
    const src = index.get(ref.kind, ref.namespace, ref.name);
    const url = (src?.spec as { url?: string } | undefined)?.url;
    const revision = src ? revisionOf(src) : undefined;
    source = { ...ref, url, revision, commitUrl: commitLink(url, revision) };
  } else if (spec.url) {
    const revision = revisionOf(obj);
    source = { kind, namespace, name, url: spec.url, revision, commitUrl: commitLink(spec.url, revision) };
  }
  const object = structuredClone(obj);
  delete object.metadata.managedFields;
  const lookup = (k: string, ns: string, n: string) => index.get(k, ns, n);
  const fleet = kind === 'KustomizationSet' ? fleetView(obj, lookup) : undefined;
  // A set's own chain (whyBlocked) only knows suspension and its Ready message; its rollout says more.
  const fleetReason =
    fleet && !spec.suspend && readyCondition(obj)?.status !== 'True' ? fleetWhy(obj, fleet) : undefined;
  return {
    kind,
    namespace,
    name,
    suspended: Boolean(spec.suspend),
    conditions: status.conditions ?? [],
    events,
    history: status.history ?? [],
    inventory,
    revision: fleet?.targetRevision || revisionOf(obj),
    source,
    dependsOn: (spec.dependsOn ?? []).map((d) => ({
      kind: d.kind ?? kind,
      namespace: d.namespace ?? namespace,
      name: d.name,
    })),
    why: fleetReason ?? whyNotApplied(obj, lookup, inventory),
    fleet,
    object,
  };
}
