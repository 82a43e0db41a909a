import { getJson, type ObjectDetail, type ObjectDiff, postAction } from './api.ts';
import { badge, type Child, h, objectHref } from './dom.ts';
import { fleetSection, memberKeys } from './fleet-view.ts';
import { onChanges, RESYNC } from './live.ts';

function table(label: string, columns: string[], rows: Child[][]): HTMLElement {
  if (rows.length === 0) return h('p', { class: 'muted' }, `no ${label.toLowerCase()}`);
  return h(
    'table',
    { 'aria-label': label },
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        columns.map((c) => h('th', { scope: 'col' }, c)),
      ),
    ),
    h(
      'tbody',
      {},
      rows.map((r) =>
        h(
          'tr',
          {},
          r.map((c) => h('td', {}, c)),
        ),
      ),
    ),
  );
}

function stateOfDetail(d: ObjectDetail): string {
  if (d.suspended) return 'suspended';
  const ready = d.conditions.find((c) => c.type === 'Ready');
  return ready?.status === 'True' ? 'ready' : ready?.status === 'False' ? 'failed' : 'progressing';
}

function historyRows(history: unknown[]): Child[][] {
  return history.slice(0, 20).map((entry) => {
    const e = entry as Record<string, unknown>;
    const revision =
      (e.metadata as Record<string, string> | undefined)?.revision ?? e.revision ?? e.chartVersion ?? '';
    const when = e.lastReconciled ?? e.lastDeployed ?? e.firstDeployed ?? '';
    const duration = e.lastReconciledDuration ?? '';
    const digest = String(e.digest ?? '').slice(0, 19);
    return [
      String(revision),
      digest,
      String(e.lastReconciledStatus ?? e.status ?? ''),
      String(when),
      String(duration),
    ];
  });
}

/**
 * An object page: why it is not applied, actions, a set's fleet, conditions, source, inventory with
 * kstatus, history, events.
 */
export function renderObject(main: HTMLElement, kind: string, namespace: string, name: string): () => void {
  const notice = h('div', { role: 'status', 'aria-live': 'polite' });
  const body = h('div');
  main.replaceChildren(h('h1', {}, `${kind} ${namespace}/${name}`), notice, body);

  const act = async (action: string, label: string): Promise<void> => {
    notice.replaceChildren(h('p', { class: 'notice' }, `${label}…`));
    try {
      const result = await postAction(action, kind, namespace, name);
      notice.replaceChildren(
        h(
          'p',
          { class: `notice ${result.ok ? 'ok' : 'error'}`, role: result.ok ? 'status' : 'alert' },
          result.ok ? result.message : `refused: ${result.message}`,
        ),
      );
    } catch (err) {
      notice.replaceChildren(h('p', { class: 'notice error', role: 'alert' }, (err as Error).message));
    }
  };

  // A set's page also re-reads when one of its members changes.
  let members = new Set<string>();
  const load = async (): Promise<void> => {
    const d = await getJson<ObjectDetail>(
      `/api/object/${encodeURIComponent(kind)}/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}`,
    );
    members = memberKeys(d.fleet, namespace);
    const state = stateOfDetail(d);
    const hasSource = Boolean((d.object.spec as { sourceRef?: unknown } | undefined)?.sourceRef);
    const actions = h(
      'div',
      { class: 'actions', role: 'group', 'aria-label': 'Actions' },
      h('button', { type: 'button', onclick: () => void act('reconcile', 'Reconciling') }, 'Reconcile'),
      hasSource &&
        h(
          'button',
          { type: 'button', onclick: () => void act('reconcile-with-source', 'Reconciling with source') },
          'Reconcile with source',
        ),
      d.suspended
        ? h('button', { type: 'button', onclick: () => void act('resume', 'Resuming') }, 'Resume')
        : h('button', { type: 'button', onclick: () => void act('suspend', 'Suspending') }, 'Suspend'),
      (kind === 'Kustomization' || kind === 'HelmRelease') &&
        h('a', { href: diffHref(kind, namespace, name) }, 'Diff Git against the cluster'),
    );
    const why = d.why
      ? h(
          'section',
          { class: 'why', 'aria-label': 'Why is this not applied?' },
          h('strong', {}, 'Why is this not applied? '),
          h('span', { 'data-testid': 'why' }, d.why.sentence),
          d.why.blocking && [
            ' ',
            h(
              'a',
              { href: objectHref(d.why.blocking.kind, d.why.blocking.namespace, d.why.blocking.name) },
              'open it',
            ),
          ],
        )
      : null;
    const source = d.source
      ? h(
          'p',
          {},
          'Source: ',
          d.source.kind === kind && d.source.name === name
            ? (d.source.url ?? '')
            : h(
                'a',
                { href: objectHref(d.source.kind, d.source.namespace, d.source.name) },
                `${d.source.kind} ${d.source.namespace}/${d.source.name}`,
              ),
          d.source.revision
            ? [
                ' at ',
                d.source.commitUrl
                  ? h('a', { href: d.source.commitUrl, rel: 'noreferrer' }, d.source.revision)
                  : d.source.revision,
              ]
            : '',
        )
      : null;
    body.replaceChildren(
      h(
        'div',
        {},
        h('p', {}, badge(state), ' ', d.revision ? `revision ${d.revision}` : 'no revision yet'),
        why,
        actions,
        d.fleet && fleetSection(d.fleet, namespace),
        source,
        d.dependsOn.length > 0 &&
          h(
            'p',
            {},
            'Depends on: ',
            d.dependsOn.map((dep, i) => [
              i ? ', ' : '',
              h(
                'a',
                { href: objectHref(dep.kind, dep.namespace, dep.name) },
                `${dep.kind} ${dep.namespace}/${dep.name}`,
              ),
            ]),
          ),
        h('h2', {}, 'Conditions'),
        table(
          'Conditions',
          ['Type', 'Status', 'Reason', 'Message', 'Since'],
          d.conditions.map((c) => [
            c.type,
            c.status,
            c.reason ?? '',
            c.message ?? '',
            c.lastTransitionTime ?? '',
          ]),
        ),
        h('h2', {}, 'Inventory'),
        table(
          'Inventory',
          ['Health', 'Kind', 'Namespace', 'Name', 'Message'],
          d.inventory.map((i) => [badge(i.status), i.kind, i.namespace, i.name, i.message]),
        ),
        h('h2', {}, 'History'),
        table('History', ['Revision', 'Digest', 'Result', 'When', 'Duration'], historyRows(d.history)),
        h('h2', {}, 'Events'),
        table(
          'Events',
          ['Type', 'Reason', 'Message', 'Count', 'Last seen'],
          d.events.map((e) => [e.type, e.reason, e.message, String(e.count), e.lastSeen]),
        ),
      ),
    );
  };
  const fail = (err: unknown): void => {
    body.replaceChildren(h('p', { class: 'notice error', role: 'alert' }, (err as Error).message));
  };
  load().catch(fail);
  const key = `${kind}/${namespace}/${name}`;
  return onChanges((changes) => {
    if (changes === RESYNC || changes.some((c) => c.key === key || members.has(c.key)))
      void load().catch(fail);
  });
}

function diffLines(patch: string): HTMLElement {
  const pre = h('pre', { class: 'diff' });
  for (const line of patch.split('\n')) {
    const cls =
      line.startsWith('+') && !line.startsWith('+++')
        ? 'add'
        : line.startsWith('-') && !line.startsWith('---')
          ? 'del'
          : line.startsWith('@@')
            ? 'hunk'
            : '';
    pre.append(h('span', { class: cls }, line), '\n');
  }
  return pre;
}

const diffPath = (kind: string, namespace: string, name: string): string =>
  `${encodeURIComponent(kind)}/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}`;

/** The diff view's URL: `#/diff/<Kind>/<namespace>/<name>` (`#/diff/<namespace>/<name>` is a Kustomization's). */
export const diffHref = (kind: string, namespace: string, name: string): string =>
  `#/diff/${diffPath(kind, namespace, name)}`;

/** The diff of Git (the source's artifact, rendered as the operator would) against the live cluster. */
export function renderDiff(main: HTMLElement, kind: string, namespace: string, name: string): () => void {
  const body = h('div', { 'aria-busy': 'true' }, h('p', { class: 'muted' }, 'rendering and dry-running…'));
  main.replaceChildren(
    h('h1', {}, `Diff: ${kind} ${namespace}/${name}`),
    h(
      'p',
      {},
      h('a', { href: objectHref(kind, namespace, name) }, 'back to the object'),
      h('span', { class: 'muted' }, ' · Git against the live cluster, Secret values masked'),
    ),
    body,
  );
  getJson<{ diffs: ObjectDiff[] }>(`/api/diff/${diffPath(kind, namespace, name)}`)
    .then(({ diffs }) => {
      body.setAttribute('aria-busy', 'false');
      if (diffs.length === 0)
        body.replaceChildren(h('p', { class: 'notice ok' }, 'no drift: the cluster matches Git'));
      else
        body.replaceChildren(
          ...diffs.flatMap((d) => [h('h2', {}, `${d.id} ${d.change}`), diffLines(d.patch)]),
        );
    })
    .catch((err: Error) => {
      body.setAttribute('aria-busy', 'false');
      body.replaceChildren(h('p', { class: 'notice error', role: 'alert' }, err.message));
    });
  return () => undefined;
}
