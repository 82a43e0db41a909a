import dagre from '@dagrejs/dagre';
import type { Graph } from './api.ts';

export const NODE_W = 190;
export const NODE_H = 40;

/** Where each node's centre and each edge's polyline go, and the drawing's size. */
export interface Layout {
  nodes: Record<string, { x: number; y: number }>;
  edges: { x: number; y: number }[][];
  width: number;
  height: number;
}

/** Lays the graph out left to right with dagre; `edges[i]` is the path of `graph.edges[i]`. */
export function layOut(graph: Pick<Graph, 'nodes' | 'edges'>): Layout {
  const g = new dagre.graphlib.Graph();
  g.setGraph({ rankdir: 'LR', nodesep: 14, ranksep: 60, marginx: 10, marginy: 10 });
  g.setDefaultEdgeLabel(() => ({}));
  for (const n of graph.nodes) g.setNode(n.id, { width: NODE_W, height: NODE_H });
  for (const e of graph.edges) g.setEdge(e.from, e.to);
  dagre.layout(g);
  const nodes: Layout['nodes'] = {};
  for (const n of graph.nodes) {
    const p = g.node(n.id);
    nodes[n.id] = { x: p.x, y: p.y };
  }
  const edges = graph.edges.map(
    (e) => (g.edge(e.from, e.to) as { points?: { x: number; y: number }[] } | undefined)?.points ?? [],
  );
  const size = g.graph();
  return { nodes, edges, width: size.width ?? 400, height: size.height ?? 300 };
}
