// What a V8 heap snapshot holds, summed by constructor (the "Summary" view of Chrome's DevTools),
// so a bench can say where an operator's memory goes without a browser: the largest groups by
// their objects' own sizes. Hand-written: V8's snapshot format is a flat JSON of node fields
// (its `meta` names them), and no maintained Node library summarises it.
import { readFile } from 'node:fs/promises';

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: (string[] | string)[] } };
  nodes: number[];
  strings: string[];
}

export interface HeapGroup {
  /** The node type and constructor name (e.g. `object Map`, `string`, `array`). */
  name: string;
  count: number;
  selfBytes: number;
}

/** The `top` largest groups of the snapshot at `path`, and the heap's total self size. */
export async function summariseHeap(
  path: string,
  top = 15,
): Promise<{ totalBytes: number; groups: HeapGroup[] }> {
  const snap = JSON.parse(await readFile(path, 'utf8')) as Snapshot;
  const fields = snap.snapshot.meta.node_fields;
  const types = snap.snapshot.meta.node_types[0] as string[];
  const width = fields.length;
  const typeAt = fields.indexOf('type');
  const nameAt = fields.indexOf('name');
  const sizeAt = fields.indexOf('self_size');
  const groups = new Map<string, HeapGroup>();
  let totalBytes = 0;
  for (let i = 0; i < snap.nodes.length; i += width) {
    const type = types[snap.nodes[i + typeAt]!] ?? '?';
    const size = snap.nodes[i + sizeAt]!;
    totalBytes += size;
    // Strings are grouped as one: their "name" is their content.
    const name =
      type === 'object' || type === 'closure' ? `${type} ${snap.strings[snap.nodes[i + nameAt]!]}` : type;
    const g = groups.get(name) ?? { name, count: 0, selfBytes: 0 };
    g.count++;
    g.selfBytes += size;
    groups.set(name, g);
  }
  return { totalBytes, groups: [...groups.values()].sort((a, b) => b.selfBytes - a.selfBytes).slice(0, top) };
}
