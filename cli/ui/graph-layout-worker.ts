// The graph's layout runs here, off the page's thread: at a thousand nodes dagre takes seconds, and
// the page must keep answering clicks and keys (and the live stream) meanwhile.
import type { Graph } from './api.ts';
import { layOut } from './graph-layout.ts';

addEventListener('message', (ev: MessageEvent<{ seq: number; graph: Pick<Graph, 'nodes' | 'edges'> }>) => {
  postMessage({ seq: ev.data.seq, layout: layOut(ev.data.graph) });
});
