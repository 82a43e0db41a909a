import { rowMatchesSearch } from '../src/ui/row-search.ts';
import { type Graph, getJson, query, type RowChange } from './api.ts';
import { h, objectHref, s } from './dom.ts';
import { type Layout, layOut, NODE_H, NODE_W } from './graph-layout.ts';
import { onChanges, RESYNC } from './live.ts';

interface View {
  x: number;
  y: number;
  w: number;
  h: number;
}

let layoutWorker: Worker | undefined;
let layoutSeq = 0;

/**
 * The layout of `graph`, computed in a worker (the bundle's graph-layout-worker.js) so the page
 * stays responsive; on the page's own thread where workers are not available.
 */
function layoutOf(graph: Graph): Promise<Layout> {
  if (typeof Worker === 'undefined') return Promise.resolve(layOut(graph));
  layoutWorker ??= new Worker('/graph-layout-worker.js', { type: 'module' });
  const worker = layoutWorker;
  const seq = ++layoutSeq;
  return new Promise((resolve, reject) => {
    const onMessage = (ev: MessageEvent<{ seq: number; layout: Layout }>): void => {
      if (ev.data.seq !== seq) return;
      worker.removeEventListener('message', onMessage);
      worker.removeEventListener('error', onError);
      resolve(ev.data.layout);
    };
    const onError = (ev: ErrorEvent): void => {
      worker.removeEventListener('message', onMessage);
      worker.removeEventListener('error', onError);
      reject(new Error(`the graph's layout failed: ${ev.message}`));
    };
    worker.addEventListener('message', onMessage);
    worker.addEventListener('error', onError);
    worker.postMessage({ seq, graph: { nodes: graph.nodes, edges: graph.edges } });
  });
}

/** Draws the laid-out graph as SVG; nodes of Mooring objects are links. */
function draw(svg: SVGSVGElement, graph: Graph, layout: Layout): View {
  const edges = graph.edges.map((e, i) => {
    const points = layout.edges[i] ?? [];
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
    const p = layout.nodes[n.id] ?? { x: 0, y: 0 };
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
  return { x: 0, y: 0, w: Math.max(layout.width, 200), h: Math.max(layout.height, 150) };
}

/** The delivery graph: sources and sets → Kustomizations/HelmReleases → applied objects, dependsOn edges; zoom and pan. */
export function renderGraph(main: HTMLElement, params: URLSearchParams): () => void {
  const namespace = params.get('namespace') ?? '';
  const search = params.get('search') ?? '';
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
  const searchInput = h('input', {
    type: 'search',
    name: 'search',
    value: search,
    placeholder: 'any name',
  }) as HTMLInputElement;
  main.replaceChildren(
    h('h1', {}, 'Graph'),
    h(
      'form',
      {
        class: 'filters',
        onsubmit: (ev: Event) => {
          ev.preventDefault();
          location.hash = `#/graph${query({ namespace: nsInput.value, search: searchInput.value })}`;
        },
      },
      h('label', {}, 'Namespace', nsInput),
      h('label', {}, 'Name contains', searchInput),
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
  let drawn: Graph | undefined;
  const load = async (): Promise<void> => {
    const seq = ++latest;
    const graph = await getJson<Graph>(`/api/graph${query({ namespace, search })}`);
    if (seq !== latest) return;
    if (first) note.textContent = `laying out ${graph.nodes.length.toLocaleString('en')} nodes…`;
    const layout = await layoutOf(graph);
    if (seq !== latest) return;
    const laid = draw(svg, graph, layout);
    drawn = graph;
    note.textContent = summary(graph);
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
  return onChanges((changes) => {
    if (!drawn || changes === RESYNC || changes.some((c) => changesDrawing(drawn!, c, namespace, search)))
      load().catch(fail);
  }, 500);
}

/** How much of the filtered graph is drawn, and how to see the rest when it was cut. */
function summary(graph: Graph): string {
  const counts = `${graph.nodes.length.toLocaleString('en')} nodes, ${graph.edges.length.toLocaleString('en')} edges`;
  if (!graph.truncated) return counts;
  const { shown, total } = graph.appliers;
  const cut = `the graph is cut at ${graph.maxNodes.toLocaleString('en')} nodes`;
  const left =
    shown < total
      ? `${shown.toLocaleString('en')} of ${total.toLocaleString('en')} Kustomizations, HelmReleases and sets drawn, failing first`
      : 'some applied objects of the last one drawn are left out';
  return `${counts} (${cut}: ${left}). Pick a namespace or a name to see the rest.`;
}

/**
 * Whether a change can alter what is drawn: a drawn object changed or left, or a matching one came
 * or now fails (a cut graph draws failing trees first). A layout costs seconds at a thousand nodes:
 * the page is not laid out again for the other 4,000 objects' status writes.
 */
function changesDrawing(graph: Graph, change: RowChange, namespace: string, search: string): boolean {
  if (graph.nodes.some((n) => n.id === change.key)) return true;
  if (change.type === 'delete') return false;
  const row = change.row;
  if (namespace && row.namespace !== namespace) return false;
  if (!rowMatchesSearch(row, search)) return false;
  return !graph.truncated || row.state === 'failed';
}
