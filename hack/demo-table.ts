// The demo's live status table: one row per Mooring object in every namespace, as
// `mooring get all -A` shows them, and what to write so the screen shows the current table. On a
// terminal the table is redrawn in place (ANSI cursor-up, then each changed line rewritten); when
// stdout is a file or a pipe only the rows that changed are printed, one plain line each.
import {
  HELM_API_VERSION,
  KUSTOMIZE_API_VERSION,
  NOTIFICATION_API_VERSION,
  SOURCE_API_VERSION,
} from '@mooring/api';
import type { KubeClient, KubeObject } from '@mooring/runtime';

/** The kinds the demo's operators reconcile, in the order the table lists them. */
export const STATUS_KINDS = [
  [SOURCE_API_VERSION, 'GitRepository'],
  [SOURCE_API_VERSION, 'OCIRepository'],
  [SOURCE_API_VERSION, 'HelmChart'],
  [KUSTOMIZE_API_VERSION, 'Kustomization'],
  [HELM_API_VERSION, 'HelmRelease'],
  [NOTIFICATION_API_VERSION, 'Receiver'],
  [NOTIFICATION_API_VERSION, 'Provider'],
  [NOTIFICATION_API_VERSION, 'Alert'],
] as const;

export interface StatusRow {
  namespace: string;
  kind: string;
  name: string;
  revision: string;
  suspended: string;
  ready: string;
  message: string;
}

const HEADER = ['NAMESPACE', 'NAME', 'REVISION', 'SUSPENDED', 'READY', 'MESSAGE'];
const INDENT = '   ';
/** The longest message a plain line carries (a terminal gets what fits its width). */
const PLAIN_MESSAGE = 90;

const ESC = '\x1b[';
/** Cursor up n lines, to column 1. */
const up = (n: number) => (n > 0 ? `${ESC}${n}A\r` : '\r');
const CLEAR_LINE = `${ESC}2K`;
const CLEAR_BELOW = `${ESC}J`;

/** A 40-hex commit shortened to 7, wherever it appears (revision or message). */
const shortSha = (s: string) => s.replace(/(sha1:[0-9a-f]{7})[0-9a-f]{33}\b/g, '$1');

/** The row of one object: revision, suspended, ready and message as `mooring get` shows them. */
export function statusRowOf(kind: string, obj: KubeObject): StatusRow {
  const status = (obj.status ?? {}) as {
    artifact?: { revision?: string };
    lastAppliedRevision?: string;
    history?: { chartVersion?: string; version?: number }[];
    conditions?: { type: string; status: string; message?: string }[];
  };
  // A HelmRelease's revision is its chart version and Helm release number.
  const release = status.history?.[0];
  const ready = status.conditions?.find((c) => c.type === 'Ready');
  return {
    namespace: obj.metadata.namespace ?? '',
    kind,
    name: obj.metadata.name ?? '',
    revision: shortSha(
      status.lastAppliedRevision ??
        status.artifact?.revision ??
        (release?.chartVersion ? `${release.chartVersion} (v${release.version})` : ''),
    ),
    suspended: (obj.spec as { suspend?: boolean } | undefined)?.suspend ? 'True' : 'False',
    ready: ready?.status ?? 'Unknown',
    message: shortSha((ready?.message ?? '').replace(/\s+/g, ' ').trim()),
  };
}

/** Every object of STATUS_KINDS in every namespace, by namespace, then kind, then name. */
export async function statusRows(client: Pick<KubeClient, 'list'>): Promise<StatusRow[]> {
  const rows: StatusRow[] = [];
  for (const [apiVersion, kind] of STATUS_KINDS)
    for (const o of (await client.list(apiVersion, kind)).items) rows.push(statusRowOf(kind, o));
  const order = (k: string) => STATUS_KINDS.findIndex(([, kind]) => kind === k);
  return rows.sort(
    (a, b) =>
      a.namespace.localeCompare(b.namespace) || order(a.kind) - order(b.kind) || a.name.localeCompare(b.name),
  );
}

const keyOf = (r: StatusRow) => `${r.namespace}/${r.kind}/${r.name}`;
const cellsOf = (r: StatusRow, messageMax?: number): string[] => [
  r.namespace,
  `${r.kind.toLowerCase()}/${r.name}`,
  r.revision,
  r.suspended,
  r.ready,
  messageMax !== undefined && r.message.length > messageMax
    ? `${r.message.slice(0, messageMax - 1)}…`
    : r.message,
];

/** Lines of a table whose column widths fit every row of `sizedBy` (the header included). */
function lines(shown: string[][], sizedBy: string[][], width: number | undefined): string[] {
  const widths = HEADER.map((_, i) => Math.max(...sizedBy.map((r) => r[i]!.length)));
  return shown.map((cells) => {
    const line = `${INDENT}${cells.map((c, i) => c.padEnd(widths[i]!)).join('  ')}`.trimEnd();
    // A line wider than the terminal would wrap, and cursor-up would then miss the table's top.
    return width !== undefined && line.length > width ? `${line.slice(0, Math.max(0, width - 1))}…` : line;
  });
}

/** The whole table, header first; `width` (a terminal's columns) cuts each line to fit. */
export function tableLines(rows: StatusRow[], width?: number): string[] {
  const all = [HEADER, ...rows.map((r) => cellsOf(r, width === undefined ? PLAIN_MESSAGE : undefined))];
  return lines(all, all, width);
}

/** Where the table goes: a terminal (and how wide it is), or a file or pipe. */
export interface TableOutput {
  tty: boolean;
  columns?: number;
}

/**
 * What to write after `previous` (undefined: nothing drawn yet) so the reader sees `current`.
 * On a terminal: the cursor goes up to the first line that differs, rewrites from there and
 * clears what is left of the old table; nothing when no line differs. Otherwise: the whole table
 * the first time, then one plain line per row added or changed and one, marked `(deleted)`, per
 * row gone; no escape sequences.
 */
export function renderUpdate(
  previous: StatusRow[] | undefined,
  current: StatusRow[],
  out: TableOutput,
): string {
  if (out.tty) {
    const next = tableLines(current, out.columns);
    if (!previous) return next.map((l) => `${l}\n`).join('');
    const prev = tableLines(previous, out.columns);
    let first = 0;
    while (first < prev.length && first < next.length && prev[first] === next[first]) first++;
    if (first === prev.length && first === next.length) return '';
    return `${up(prev.length - first)}${next
      .slice(first)
      .map((l) => `${CLEAR_LINE}${l}\n`)
      .join('')}${CLEAR_BELOW}`;
  }
  if (!previous)
    return tableLines(current)
      .map((l) => `${l}\n`)
      .join('');
  const before = new Map(previous.map((r) => [keyOf(r), r]));
  const now = new Set(current.map(keyOf));
  const changed = current.filter((r) => {
    const b = before.get(keyOf(r));
    return !b || cellsOf(b).join('\0') !== cellsOf(r).join('\0');
  });
  const gone = previous.filter((r) => !now.has(keyOf(r))).map((r) => ({ ...r, message: '(deleted)' }));
  if (changed.length === 0 && gone.length === 0) return '';
  const shown = [...changed, ...gone].map((r) => cellsOf(r, PLAIN_MESSAGE));
  // Sized like the current table, so a changed line lines up with the table printed before it.
  const sizedBy = [HEADER, ...current.map((r) => cellsOf(r, PLAIN_MESSAGE)), ...shown];
  return lines(shown, sizedBy, undefined)
    .map((l) => `${l}\n`)
    .join('');
}

/**
 * Draws the table, then every `everyMs` lists again and writes what changed, until `signal`
 * aborts. A failed list (the API server busy or restarting) keeps the table as it is.
 * `output()` is read on every round, so a resized terminal is drawn afresh at its new width.
 */
export async function followStatus(options: {
  rows: () => Promise<StatusRow[]>;
  write: (s: string) => void;
  output: () => TableOutput;
  signal: AbortSignal;
  everyMs?: number;
}): Promise<void> {
  let shown: StatusRow[] | undefined;
  let drawnFor = options.output();
  while (!options.signal.aborted) {
    const rows = await options.rows().catch(() => undefined);
    if (options.signal.aborted) return;
    if (rows) {
      const out = options.output();
      // After a resize the old lines may have wrapped; draw a fresh table below rather than guess.
      if (out.tty && out.columns !== drawnFor.columns) shown = undefined;
      drawnFor = out;
      options.write(renderUpdate(shown, rows, out));
      shown = rows;
    }
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        options.signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, options.everyMs ?? 1000);
      options.signal.addEventListener('abort', done);
    });
  }
}
