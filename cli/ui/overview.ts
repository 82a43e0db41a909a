import { getJson, type ObjectRow, query, type RowPage } from './api.ts';
import { badge, h, objectHref } from './dom.ts';
import { onChanges } from './live.ts';

const PAGE_SIZE = 100;
const STATES = ['failed', 'progressing', 'suspended', 'ready'];

/** Filters live in the hash (`#/?namespace=&kind=&state=&label=&search=&offset=`), so a view can be shared. */
function filtersOf(params: URLSearchParams): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of ['namespace', 'kind', 'state', 'label', 'search', 'offset']) {
    const v = params.get(k);
    if (v) out[k] = v;
  }
  return out;
}

function select(label: string, name: string, values: string[], current: string | undefined): HTMLElement {
  return h(
    'label',
    {},
    label,
    h(
      'select',
      { name },
      h('option', { value: '' }, `any ${label.toLowerCase()}`),
      values.map((v) => h('option', { value: v, selected: v === current }, v)),
    ),
  );
}

function rowElement(row: ObjectRow): HTMLElement {
  return h(
    'tr',
    { 'data-key': `${row.kind}/${row.namespace}/${row.name}`, 'data-state': row.state },
    h('td', {}, badge(row.state)),
    h('td', {}, row.kind),
    h('td', {}, row.namespace),
    h('td', {}, h('a', { href: objectHref(row.kind, row.namespace, row.name) }, row.name)),
    h(
      'td',
      { class: 'muted' },
      row.revision,
      row.members
        ? [row.revision ? ' · ' : '', `${row.members.ready}/${row.members.total} members Ready`]
        : '',
    ),
    h('td', { class: 'msg' }, row.reason ? `${row.reason}: ` : '', row.message),
  );
}

/** The overview: every Mooring object by state (failing first), filtered and paged by the server. */
export function renderOverview(main: HTMLElement, params: URLSearchParams): () => void {
  const filters = filtersOf(params);
  const form = h('form', { class: 'filters', role: 'search', 'aria-label': 'Filter objects' });
  const counts = h('div', { class: 'counts', 'aria-label': 'Counts' });
  const body = h('div', { 'aria-live': 'polite' });
  main.replaceChildren(h('h1', {}, 'Overview'), form, counts, body);
  let firstPage: RowPage | undefined;

  const go = (next: Record<string, string>, replace = false): void => {
    const hash = `#/${query(next)}`;
    if (replace) history.replaceState(null, '', hash);
    else location.hash = hash;
  };
  const buildForm = (page: RowPage): void => {
    const search = h('input', {
      type: 'search',
      name: 'search',
      value: filters.search ?? '',
      placeholder: 'name, message, revision',
    }) as HTMLInputElement;
    form.replaceChildren(
      select('Namespace', 'namespace', page.namespaces, filters.namespace),
      select('Kind', 'kind', page.kinds, filters.kind),
      select('State', 'state', STATES, filters.state),
      h(
        'label',
        {},
        'Label',
        h('input', {
          type: 'text',
          name: 'label',
          value: filters.label ?? '',
          placeholder: 'team=ml,tier!=test',
        }),
      ),
      h('label', {}, 'Search', search),
    );
    form.addEventListener('change', (ev) => {
      const el = ev.target as HTMLSelectElement;
      if (el.name === 'search') return;
      const next = { ...filters, [el.name]: el.value };
      delete next.offset;
      go(next);
    });
    let typing: number | undefined;
    search.addEventListener('input', () => {
      window.clearTimeout(typing);
      typing = window.setTimeout(() => {
        filters.search = search.value;
        delete filters.offset;
        go({ ...filters }, true);
        void load();
      }, 250);
    });
    form.addEventListener('submit', (ev) => ev.preventDefault());
  };
  // Loads may overlap when changes come fast: only the latest one's answer is drawn.
  let latest = 0;
  const load = async (): Promise<void> => {
    const seq = ++latest;
    const page = await getJson<RowPage>(`/api/objects${query({ ...filters, limit: PAGE_SIZE })}`);
    if (seq !== latest) return;
    if (!firstPage) buildForm(page);
    firstPage = page;
    counts.replaceChildren(
      h('span', { class: 'count' }, `${Object.values(page.counts.kind).reduce((a, b) => a + b, 0)} objects`),
      ...STATES.map((s) => h('span', { class: `count state-${s}` }, `${page.counts.state[s] ?? 0} ${s}`)),
      ...Object.entries(page.unavailable).map(([kind, why]) =>
        h('span', { class: 'count muted', title: why }, `${kind}: not readable`),
      ),
    );
    const offset = page.offset;
    const table = h(
      'table',
      { 'aria-label': 'Mooring objects' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ['State', 'Kind', 'Namespace', 'Name', 'Revision', 'Message'].map((c) =>
            h('th', { scope: 'col' }, c),
          ),
        ),
      ),
      h('tbody', {}, page.rows.map(rowElement)),
    );
    const pager = h(
      'div',
      { class: 'pager' },
      h(
        'button',
        {
          type: 'button',
          disabled: offset === 0,
          onclick: () => go({ ...filters, offset: String(Math.max(0, offset - PAGE_SIZE)) }),
        },
        'Previous',
      ),
      h(
        'span',
        {},
        page.total === 0 ? 'nothing matches' : `${offset + 1}–${offset + page.rows.length} of ${page.total}`,
      ),
      h(
        'button',
        {
          type: 'button',
          disabled: offset + page.rows.length >= page.total,
          onclick: () => go({ ...filters, offset: String(offset + PAGE_SIZE) }),
        },
        'Next',
      ),
    );
    body.replaceChildren(table, pager);
  };
  const fail = (err: unknown): void => {
    body.replaceChildren(h('p', { class: 'notice error', role: 'alert' }, (err as Error).message));
  };
  load().catch(fail);
  // The page re-reads only its own page of rows when something changes, never the whole list.
  return onChanges(() => void load().catch(fail));
}
