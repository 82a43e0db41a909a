import type { ObjectDetail } from './api.ts';
import { badge, type Child, h, objectHref } from './dom.ts';

type Fleet = NonNullable<ObjectDetail['fleet']>;

// Badge words for the states the fleet has, so each shows as the overview's states do.
const READY_STATE: Record<string, string> = { True: 'ready', False: 'failed', Unknown: 'progressing' };
const STEP_STATE: Record<string, string> = {
  done: 'ready',
  'in progress': 'progressing',
  paused: 'suspended',
  failed: 'failed',
  waiting: 'Unknown',
};

const short = (revision: string): string => revision.slice(0, 12);

function stepList(fleet: Fleet): HTMLElement {
  return h(
    'ol',
    { class: 'steps', 'aria-label': 'Rollout steps' },
    fleet.steps.map((s) =>
      h(
        'li',
        { 'data-step': s.step, 'data-state': s.state },
        h('span', { class: `state state-${STEP_STATE[s.state] ?? 'Unknown'}` }, s.state),
        ` step ${s.step}: ${s.selects}`,
        s.maxUnavailable ? ` · maxUnavailable ${s.maxUnavailable}` : '',
        s.soakTime ? ` · soak ${s.soakTime}` : '',
      ),
    ),
  );
}

function memberTable(fleet: Fleet, namespace: string): HTMLElement {
  if (fleet.members.length === 0) return h('p', { class: 'muted' }, 'no members yet');
  const columns = ['Member', 'Object', 'Spec digest', 'Applied', 'Ready', 'Rollout', 'Last message', 'Since'];
  const cells = (m: Fleet['members'][number]): Child[] => [
    m.name,
    m.exists
      ? h('a', { href: objectHref(m.kind, namespace, m.objectName) }, `${m.kind} ${m.objectName}`)
      : `${m.kind} ${m.objectName} (not created yet)`,
    h(
      'span',
      { title: m.revision, class: m.atTarget ? '' : 'outdated' },
      m.revision ? short(m.revision) : '—',
      m.atTarget ? '' : ' (previous template)',
    ),
    m.releaseVersion !== undefined ? `release v${m.releaseVersion}, ${m.appliedRevision}` : m.appliedRevision,
    badge(READY_STATE[m.ready] ?? 'Unknown'),
    badge(m.state),
    m.message,
    m.time,
  ];
  return h(
    'table',
    { 'aria-label': 'Members' },
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
      fleet.members.map((m) =>
        h(
          'tr',
          { 'data-member': m.name, 'data-ready': m.ready },
          cells(m).map((c) => h('td', {}, c)),
        ),
      ),
    ),
  );
}

/** The fleet view of a KustomizationSet: counts, the rollout step by step, one row per member. */
export function fleetSection(fleet: Fleet, namespace: string): HTMLElement {
  const { counts, rollout } = fleet;
  return h(
    'section',
    { class: 'fleet', 'aria-label': 'Fleet' },
    h('h2', {}, 'Fleet'),
    h(
      'p',
      { 'data-testid': 'fleet-counts' },
      `${counts.ready} of ${counts.total} Ready · ${counts.current} Current (Ready at the target revision)`,
      counts.failed ? ` · ${counts.failed} failed` : '',
      counts.unreachable ? ` · ${counts.unreachable} unreachable` : '',
      fleet.targetRevision ? ` · target revision ${short(fleet.targetRevision)}` : '',
    ),
    h(
      'p',
      { 'data-testid': 'rollout' },
      'Rollout: ',
      h('strong', {}, rollout.phase),
      rollout.step ? ` at step ${rollout.step}` : '',
      rollout.paused ? ' (paused by spec.strategy.rollingUpdate.paused)' : '',
      rollout.message ? ` — ${rollout.message}` : '',
    ),
    stepList(fleet),
    memberTable(fleet, namespace),
  );
}

/** The keys (`Kind/namespace/name`) of a fleet's members: the page re-reads when one changes. */
export const memberKeys = (fleet: Fleet | undefined, namespace: string): Set<string> =>
  new Set((fleet?.members ?? []).map((m) => `${m.kind}/${namespace}/${m.objectName}`));
