import { renderGraph } from './graph-view.ts';
import { startLive } from './live.ts';
import { renderDiff, renderObject } from './object-view.ts';
import { renderOverview } from './overview.ts';

// Every view has a hash URL: #/?filters, #/object/Kind/ns/name, #/diff/Kind/ns/name (#/diff/ns/name
// is a Kustomization's), #/graph?namespace=.
let stopView: () => void = () => undefined;

function route(): void {
  const main = document.getElementById('main')!;
  const [path = '', search = ''] = location.hash.replace(/^#/, '').split('?');
  const params = new URLSearchParams(search);
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  stopView();
  let view = 'overview';
  if (parts[0] === 'object' && parts.length === 4) {
    view = 'object';
    stopView = renderObject(main, parts[1]!, parts[2]!, parts[3]!);
  } else if (parts[0] === 'diff' && parts.length === 3) {
    view = 'object';
    stopView = renderDiff(main, 'Kustomization', parts[1]!, parts[2]!);
  } else if (parts[0] === 'diff' && parts.length === 4) {
    view = 'object';
    stopView = renderDiff(main, parts[1]!, parts[2]!, parts[3]!);
  } else if (parts[0] === 'graph') {
    view = 'graph';
    stopView = renderGraph(main, params);
  } else {
    stopView = renderOverview(main, params);
  }
  for (const a of document.querySelectorAll<HTMLAnchorElement>('nav a'))
    if (a.dataset.view === view) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  document.title = `Mooring · ${view}`;
}

// The token came in the URL; drop it from the address bar once the cookie holds it.
if (new URLSearchParams(location.search).has('token')) history.replaceState(null, '', `/${location.hash}`);
startLive(document.getElementById('live')!);
window.addEventListener('hashchange', route);
route();
