import { type KindDefinition, SOURCE_GROUP } from '@mooring/api';
import type { KubeObject } from '@mooring/runtime';
import { parseInventoryId } from '../commands/tree.ts';
import type { ObjectIndex } from './object-index.ts';
import { rowKey } from './object-index.ts';
import { type ObjectState, rowOf, STATES, stateOf } from './object-row.ts';
import { rowMatchesSearch } from './row-search.ts';

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
  /** True when the graph was cut at `MAX_GRAPH_NODES`: some delivery trees are left out. */
  truncated: boolean;
  /** Kustomizations, HelmReleases and KustomizationSets that match the filter, and how many of them are drawn. */
  appliers: { total: number; shown: number };
  /** The most nodes a graph is drawn with (the cut). */
  maxNodes: number;
}

/** What the graph is drawn for: one namespace or all, and a word the object's row must contain, as the overview's search. */
export interface GraphQuery {
  namespace?: string;
  search?: string;
}

/**
 * About as many nodes as a browser lays out in a second or two (dagre is superlinear: ~7 s for
 * 3,000 nodes on this machine's CPUs): beyond it the graph shows the failing trees first and says
 * how many it left out.
 */
export const MAX_GRAPH_NODES = 1000;

/** The index the graph reads: every cached object, and one by key. */
export type GraphIndex = Pick<ObjectIndex, 'all' | 'get'>;

interface Ref {
  kind?: string;
  name: string;
  namespace?: string;
}

const APPLIERS = new Set(['Kustomization', 'HelmRelease']);

type AddNode = (kind: string, ns: string, name: string, state: string, mooring: boolean) => string;

// A set's members as its status lists them (the objects it generated), whether or not the watch has them yet.
function memberEdges(index: GraphIndex, set: KubeObject, id: string, node: AddNode): GraphEdge[] {
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
 * edges (from the dependency to the dependent, the direction things happen), for `q.namespace` or all, of the objects whose row
 * matches `q.search`. One tree at a time, failing first, until about `maxNodes` nodes are drawn.
 */
export function objectGraph(index: GraphIndex, q: GraphQuery = {}, maxNodes = MAX_GRAPH_NODES): Graph {
  const nodes = new Map<string, GraphNode>();
  const edges: GraphEdge[] = [];
  const node: AddNode = (kind, ns, name, state, mooring) => {
    const id = rowKey(kind, ns, name);
    if (!nodes.has(id) || (mooring && !nodes.get(id)!.mooring))
      nodes.set(id, { id, kind, namespace: ns, name, state, mooring });
    return id;
  };
  const roots: { def: KindDefinition; object: KubeObject; state: ObjectState }[] = [];
  const sources: { def: KindDefinition; object: KubeObject }[] = [];
  for (const { def, object } of index.all()) {
    if (q.namespace && (object.metadata.namespace ?? '') !== q.namespace) continue;
    if (q.search && !rowMatchesSearch(rowOf(def, object), q.search)) continue;
    if (def.group === SOURCE_GROUP) sources.push({ def, object });
    else if (def.kind === 'KustomizationSet' || APPLIERS.has(def.kind))
      roots.push({ def, object, state: stateOf(object) });
  }
  const rank = (s: ObjectState): number => STATES.indexOf(s);
  roots.sort(
    (a, b) =>
      rank(a.state) - rank(b.state) ||
      a.def.kind.localeCompare(b.def.kind) ||
      (a.object.metadata.namespace ?? '').localeCompare(b.object.metadata.namespace ?? '') ||
      (a.object.metadata.name ?? '').localeCompare(b.object.metadata.name ?? ''),
  );
  let shown = 0;
  let truncated = false;
  for (const { def, object, state } of roots) {
    if (nodes.size >= maxNodes) {
      truncated = true;
      break;
    }
    shown++;
    const ns = object.metadata.namespace ?? '';
    const id = node(def.kind, ns, object.metadata.name ?? '', state, true);
    if (def.kind === 'KustomizationSet') {
      edges.push(...memberEdges(index, object, id, node));
      continue;
    }
    edges.push(...inputEdges(index, def, object, id, node));
    const entries = (object.status as { inventory?: { entries?: { id: string; v: string }[] } } | undefined)
      ?.inventory?.entries;
    for (const e of entries ?? []) {
      const ref = parseInventoryId(e.id, e.v);
      if (!ref) continue;
      // One tree larger than what is left is cut too: its owner stays, and the note says so.
      if (nodes.size >= maxNodes) {
        truncated = true;
        break;
      }
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
  // A source no drawn object uses is still worth a node (a failing one most of all), while there is room.
  for (const { def, object } of sources) {
    if (nodes.size >= maxNodes) break;
    node(def.kind, object.metadata.namespace ?? '', object.metadata.name ?? '', stateOf(object), true);
  }
  return { nodes: [...nodes.values()], edges, truncated, appliers: { total: roots.length, shown }, maxNodes };
}

// The source an applier reads and the objects it depends on, each an edge into it.
function inputEdges(
  index: GraphIndex,
  def: KindDefinition,
  object: KubeObject,
  id: string,
  node: AddNode,
): GraphEdge[] {
  const ns = object.metadata.namespace ?? '';
  const spec = (object.spec ?? {}) as {
    sourceRef?: Ref;
    dependsOn?: Ref[];
    chart?: { spec?: { sourceRef?: Ref } };
    chartRef?: Ref;
  };
  const edges: GraphEdge[] = [];
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
  return edges;
}
