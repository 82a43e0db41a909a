import { KUSTOMIZE_API_VERSION, type Kustomization, type ResourceInventory } from '@mooring/api';
import type { KustomizationRun } from '../kustomization-run.ts';

function union(
  a: ResourceInventory | undefined,
  b: ResourceInventory | undefined,
): ResourceInventory | undefined {
  if (!a) return b;
  if (!b) return a;
  const ids = new Map(a.entries.map((e) => [e.id, e]));
  for (const e of b.entries) if (!ids.has(e.id)) ids.set(e.id, e);
  return { entries: [...ids.values()].sort((x, y) => (x.id < y.id ? -1 : x.id > y.id ? 1 : 0)) };
}

/**
 * Before a reconcile writes (objects, or an inventory that drops entries), the inventory the API
 * server holds joins `run.previous`: the informer's copy can lag behind a status write (a stalled
 * watch, or a crashed process whose last write landed after this one listed), and an inventory
 * built on the lagging copy would lose objects applied in between for good. One GET, and only
 * on reconciles that change something. Returns the entries it added.
 */
export async function joinStoredInventory(run: KustomizationRun): Promise<ResourceInventory['entries']> {
  if (run.storedInventoryJoined) return [];
  run.storedInventoryJoined = true;
  const stored = await run.deps.client.getOrUndefined<Kustomization>({
    apiVersion: KUSTOMIZE_API_VERSION,
    kind: 'Kustomization',
    namespace: run.obj.metadata.namespace,
    name: run.obj.metadata.name ?? '',
  });
  const known = new Set((run.previous?.entries ?? []).map((e) => e.id));
  const added = (stored?.status?.inventory?.entries ?? []).filter((e) => !known.has(e.id));
  if (added.length) run.previous = union(run.previous, stored?.status?.inventory);
  return added;
}
