import dagre from '@dagrejs/dagre';
import { type Graph, getJson, query } from './api.ts';
import { h, objectHref, s } from './dom.ts';
import { onChanges } from './live.ts';

const NODE_W = 190;
const NODE_H = 40;

interface View {
  x: number;
  y: number;
  w: number;
  h: number;
}

/** Lays the graph out left to right (dagre) and draws it as SVG; nodes of Mooring objects are links. */
function draw(svg: SVGSVGElement, graph: Graph): View {
  const g = new dagre.graphlib.Graph();
  g.setGraph({ rankdir: 'LR', nodesep: 14, ranksep: 60, marginx: 10, marginy: 10 });
  g.setDefaultEdgeLabel(() => ({}));
  for (const n of graph.nodes) g.setNode(n.id, { width: NODE_W, height: NODE_H });
  for (const e of graph.edges) g.setEdge(e.from, e.to);
  dagre.layout(g);
  const edges = graph.edges.map((e) => {
    const points =
      (g.edge(e.from, e.to) as { points?: { x: number; y: number }[] } | undefined)?.points ?? [];
    const d = points.map((p, i) => `${i ? 'L' : 'M'}${p.x},${p.y}`).join(' ');
    return s('path', {
      class: `edge ${e.type}`,
      d,
      'marker-end': 'url(#arrow)',
      'data-from': e.from,
      'data-to': e.to,
      'data-type': e.type,
    });
  });
  const nodes = graph.nodes.map((n) => {
    const p = g.node(n.id);
    const label = n.name.length > 26 ? `${n.name.slice(0, 25)}…` : n.name;
    const box = s(
      'g',
      {
        class: `node state-${n.state}${n.mooring ? ' mooring' : ''}`,
        transform: `translate(${p.x - NODE_W / 2},${p.y - NODE_H / 2})`,
        'data-id': n.id,
      },
      s('title', {}, `${n.kind} ${n.namespace}/${n.name}: ${n.state}`),
      s('rect', { width: NODE_W, height: NODE_H, rx: 6 }),
      s('text', { x: 8, y: 15, class: 'kind' }, `${n.kind} · ${n.state}`),
      s('text', { x: 8, y: 31 }, label),
    );
    if (!n.mooring) return box;
    return s(
      'a',
      {
        href: objectHref(n.kind, n.namespace, n.name),
        'aria-label': `${n.kind} ${n.namespace}/${n.name}, ${n.state}`,
      },
      box,
    );
  });
  const defs = s(
    'defs',
    {},
    s(
      'marker',
      {
        id: 'arrow',
        viewBox: '0 0 10 10',
        refX: 10,
        refY: 5,
        markerWidth: 7,
        markerHeight: 7,
        orient: 'auto-start-reverse',
      },
      s('path', { d: 'M0,0 L10,5 L0,10 z', fill: 'currentColor' }),
    ),
  );
  svg.replaceChildren(defs, ...edges, ...nodes);
  const label = g.graph();
  return { x: 0, y: 0, w: Math.max(label.width ?? 400, 200), h: Math.max(label.height ?? 300, 150) };
}

/** The delivery graph: sources and sets → Kustomizations/HelmReleases → applied objects, dependsOn edges; zoom and pan. */
export function renderGraph(main: HTMLElement, params: URLSearchParams): () => void {
  const namespace = params.get('namespace') ?? '';
  const svg = s('svg', {
    id: 'graph',
    role: 'img',
    'aria-label': 'Delivery graph',
    tabindex: 0,
  }) as SVGSVGElement;
  const note = h('p', { class: 'muted' });
  let view: View = { x: 0, y: 0, w: 400, h: 300 };
  const apply = (): void => svg.setAttribute('viewBox', `${view.x} ${view.y} ${view.w} ${view.h}`);
  const zoom = (factor: number, cx = view.x + view.w / 2, cy = view.y + view.h / 2): void => {
    view = {
      x: cx - (cx - view.x) * factor,
      y: cy - (cy - view.y) * factor,
      w: view.w * factor,
      h: view.h * factor,
    };
    apply();
  };
  const nsInput = h('input', {
    type: 'text',
    name: 'namespace',
    value: namespace,
    placeholder: 'every namespace',
  }) as HTMLInputElement;
  main.replaceChildren(
    h('h1', {}, 'Graph'),
    h(
      'form',
      {
        class: 'filters',
        onsubmit: (ev: Event) => {
          ev.preventDefault();
          location.hash = `#/graph${query({ namespace: nsInput.value })}`;
        },
      },
      h('label', {}, 'Namespace', nsInput),
      h('button', { type: 'submit' }, 'Show'),
      h('button', { type: 'button', 'aria-label': 'Zoom in', onclick: () => zoom(0.8) }, '+'),
      h('button', { type: 'button', 'aria-label': 'Zoom out', onclick: () => zoom(1.25) }, '−'),
    ),
    h(
      'p',
      { class: 'legend' },
      'solid grey: applied · orange: source → consumer · dashed blue: dependsOn (dependency → dependent) · dotted green: KustomizationSet → member · drag to pan, wheel or +/− to zoom',
    ),
    note,
    svg,
  );
  svg.addEventListener(
    'wheel',
    (ev) => {
      ev.preventDefault();
      const r = svg.getBoundingClientRect();
      zoom(
        ev.deltaY > 0 ? 1.15 : 0.87,
        view.x + ((ev.clientX - r.left) / r.width) * view.w,
        view.y + ((ev.clientY - r.top) / r.height) * view.h,
      );
    },
    { passive: false },
  );
  let drag: { x: number; y: number; view: View } | undefined;
  svg.addEventListener('pointerdown', (ev) => {
    if ((ev.target as Element).closest('a')) return;
    drag = { x: ev.clientX, y: ev.clientY, view };
    svg.setPointerCapture(ev.pointerId);
  });
  svg.addEventListener('pointermove', (ev) => {
    if (!drag) return;
    const r = svg.getBoundingClientRect();
    view = {
      ...drag.view,
      x: drag.view.x - ((ev.clientX - drag.x) / r.width) * drag.view.w,
      y: drag.view.y - ((ev.clientY - drag.y) / r.height) * drag.view.h,
    };
    apply();
  });
  svg.addEventListener('pointerup', () => {
    drag = undefined;
  });
  svg.addEventListener('keydown', (ev) => {
    const step = view.w * 0.1;
    const moves: Record<string, () => void> = {
      ArrowLeft: () => {
        view.x -= step;
      },
      ArrowRight: () => {
        view.x += step;
      },
      ArrowUp: () => {
        view.y -= step;
      },
      ArrowDown: () => {
        view.y += step;
      },
      '+': () => zoom(0.8),
      '=': () => zoom(0.8),
      '-': () => zoom(1.25),
    };
    const move = moves[ev.key];
    if (!move) return;
    ev.preventDefault();
    move();
    apply();
  });
  let first = true;
  let latest = 0;
  const load = async (): Promise<void> => {
    const seq = ++latest;
    const graph = await getJson<Graph>(`/api/graph${query({ namespace })}`);
    if (seq !== latest) return;
    const laid = draw(svg, graph);
    note.textContent = `${graph.nodes.length} nodes, ${graph.edges.length} edges${graph.truncated ? ' (applied objects cut at 2,000: pick a namespace)' : ''}`;
    if (first) {
      view = laid;
      first = false;
    }
    apply();
  };
  const fail = (err: unknown): void => {
    note.textContent = (err as Error).message;
  };
  load().catch(fail);
  return onChanges(() => void load().catch(fail), 500);
}
