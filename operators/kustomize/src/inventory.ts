import type { ResourceInventory } from '@mooring/api';

/** An applied object's identity, as the inventory records it. */
export interface ObjectRef {
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
}

export type InventoryEntry = ResourceInventory['entries'][number];

const groupOf = (apiVersion: string) => (apiVersion.includes('/') ? apiVersion.split('/')[0]! : '');
const versionOf = (apiVersion: string) => apiVersion.split('/').pop()!;

/** Flux's id, `<namespace>_<name>_<group>_<kind>`: empty namespace when cluster-scoped, empty group for core. */
export function inventoryId(ref: ObjectRef): string {
  return `${ref.namespace}_${ref.name}_${groupOf(ref.apiVersion)}_${ref.kind}`;
}

export function toEntry(ref: ObjectRef): InventoryEntry {
  return { id: inventoryId(ref), v: versionOf(ref.apiVersion) };
}

/** Reads an entry back into a reference; names cannot contain `_`, so the split is exact. */
export function fromEntry(entry: InventoryEntry): ObjectRef {
  const [namespace = '', name = '', group = '', kind = ''] = entry.id.split('_');
  return { namespace, name, kind, apiVersion: group ? `${group}/${entry.v}` : entry.v };
}

/** The inventory of a set of applied objects, sorted so it only changes when the set does. */
export function inventoryOf(refs: ObjectRef[]): ResourceInventory {
  const entries = refs.map(toEntry);
  entries.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return { entries };
}

/** Objects in `previous` that `current` no longer has: what pruning deletes. Version changes are not removals. */
export function staleEntries(
  previous: ResourceInventory | undefined,
  current: ResourceInventory,
): ObjectRef[] {
  const kept = new Set(current.entries.map((e) => e.id));
  return (previous?.entries ?? []).filter((e) => !kept.has(e.id)).map(fromEntry);
}

export function refToString(ref: ObjectRef): string {
  return `${ref.kind}/${ref.namespace ? `${ref.namespace}/` : ''}${ref.name}`;
}
