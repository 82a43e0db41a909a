import { SOURCE_GROUP } from '@mooring/api';
import type { KubeObject } from '@mooring/runtime';
import { parseInventoryId } from '../commands/tree.ts';
import type { ObjectIndex } from './object-index.ts';
import { rowKey } from './object-index.ts';
import { stateOf } from './object-row.ts';

/** A node of the delivery graph: a source, a KustomizationSet, a Kustomization or HelmRelease, or an object one applied. */
export interface GraphNode {
  id: string;
  kind: string;
  namespace: string;
  name: string;
  /** Ready state for Mooring objects; `applied` for an inventory entry (its health is on its owner's page). */
  state: string;
  mooring: boolean;
}

export interface GraphEdge {
  from: string;
  to: string;
  /** `member`: from a KustomizationSet to a Kustomization or HelmRelease it generated. */
  type: 'source' | 'dependsOn' | 'applied' | 'member';
}

export interface Graph {
  nodes: GraphNode[];
  edges: GraphEdge[];
  /** True when inventory entries were left out to keep the graph readable. */
  truncated: boolean;
}

interface Ref {
  kind?: string;
  name: string;
  namespace?: string;
}

const APPLIERS = new Set(['Kustomization', 'HelmRelease']);
const MAX_APPLIED = 2000;

type AddNode = (kind: string, ns: string, name: string, state: string, mooring: boolean) => string;

// A set's members as its status lists them (the objects it generated), whether or not the watch has them yet.
function memberEdges(index: ObjectIndex, set: KubeObject, id: string, node: AddNode): GraphEdge[] {
  const ns = set.metadata.namespace ?? '';
  const members = (set.status as { members?: { kustomization: string; kind?: string }[] } | undefined)
    ?.members;
  return (members ?? []).map((m) => {
    const kind = m.kind ?? 'Kustomization';
    const found = index.get(kind, ns, m.kustomization);
    return {
      from: id,
      to: node(kind, ns, m.kustomization, found ? stateOf(found) : 'missing', true),
      type: 'member',
    };
  });
}

/**
 * KustomizationSets → their members; sources → Kustomizations/HelmReleases → what each applied (status.inventory), with dependsOn
 * edges (from the dependency to the dependent, the direction things happen), for `namespace` or all.
 */
export function objectGraph(index: ObjectIndex, namespace?: string): Graph {
  const nodes = new Map<string, GraphNode>();
  const edges: GraphEdge[] = [];
  let applied = 0;
  let truncated = false;
  const node: AddNode = (kind, ns, name, state, mooring) => {
    const id = rowKey(kind, ns, name);
    if (!nodes.has(id) || (mooring && !nodes.get(id)!.mooring))
      nodes.set(id, { id, kind, namespace: ns, name, state, mooring });
    return id;
  };
  for (const { def, object } of index.all()) {
    const ns = object.metadata.namespace ?? '';
    if (namespace && ns !== namespace) continue;
    const isSource = def.group === SOURCE_GROUP;
    const isSet = def.kind === 'KustomizationSet';
    if (!isSource && !isSet && !APPLIERS.has(def.kind)) continue;
    const id = node(def.kind, ns, object.metadata.name ?? '', stateOf(object), true);
    if (isSet) {
      edges.push(...memberEdges(index, object, id, node));
      continue;
    }
    if (!APPLIERS.has(def.kind)) continue;
    const spec = (object.spec ?? {}) as {
      sourceRef?: Ref;
      dependsOn?: Ref[];
      chart?: { spec?: { sourceRef?: Ref } };
      chartRef?: Ref;
    };
    const src = spec.sourceRef ?? spec.chart?.spec?.sourceRef ?? spec.chartRef;
    if (src?.kind) {
      const srcNs = src.namespace ?? ns;
      const found = index.get(src.kind, srcNs, src.name);
      edges.push({
        from: node(src.kind, srcNs, src.name, found ? stateOf(found) : 'missing', true),
        to: id,
        type: 'source',
      });
    }
    for (const d of spec.dependsOn ?? []) {
      const kind = d.kind ?? def.kind;
      const depNs = d.namespace ?? ns;
      const found = index.get(kind, depNs, d.name);
      edges.push({
        from: node(kind, depNs, d.name, found ? stateOf(found) : 'missing', true),
        to: id,
        type: 'dependsOn',
      });
    }
    const entries = (object.status as { inventory?: { entries?: { id: string; v: string }[] } } | undefined)
      ?.inventory?.entries;
    for (const e of entries ?? []) {
      const ref = parseInventoryId(e.id, e.v);
      if (!ref) continue;
      if (applied >= MAX_APPLIED) {
        truncated = true;
        break;
      }
      applied++;
      const mooringObj = index.get(ref.kind, ref.namespace, ref.name);
      const target = node(
        ref.kind,
        ref.namespace,
        ref.name,
        mooringObj ? stateOf(mooringObj) : 'applied',
        Boolean(mooringObj),
      );
      edges.push({ from: id, to: target, type: 'applied' });
    }
  }
  return { nodes: [...nodes.values()], edges, truncated };
}
