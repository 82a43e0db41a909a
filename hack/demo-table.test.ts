// The demo's live status table as a unit: what it writes to a terminal (checked by replaying the
// bytes on a tiny terminal model) and to a pipe, for rows that change, appear and go.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { followStatus, renderUpdate, type StatusRow, statusRowOf, tableLines } from './demo-table.ts';

const row = (kind: string, name: string, extra: Partial<StatusRow> = {}): StatusRow => ({
  namespace: 'mooring-demo',
  kind,
  name,
  revision: 'main@sha1:6938a47',
  suspended: 'False',
  ready: 'True',
  message: 'Applied revision: main@sha1:6938a47',
  ...extra,
});
const start = [row('GitRepository', 'platform'), row('Kustomization', 'apps'), row('Kustomization', 'infra')];
const suspended = [start[0]!, { ...start[1]!, suspended: 'True' }, start[2]!];
const withDefault = [
  ...suspended,
  row('GitRepository', 'platform', { namespace: 'zz-team', ready: 'Unknown' }),
];
const deleted = [start[0]!, start[2]!];

/**
 * A terminal as far as the table uses one: text, \n, \r, ESC[nA (up), ESC[2K (clear line) and
 * ESC[J (clear below). Returns the screen's lines; anything else is a test failure.
 */
function screen(bytes: string): string[] {
  const lines: string[] = [''];
  let y = 0;
  let x = 0;
  for (let i = 0; i < bytes.length; ) {
    const esc = bytes.startsWith('\x1b', i) ? /^\[(\d*)([AKJ])/.exec(bytes.slice(i + 1)) : null;
    if (esc) {
      const [all, n, op] = esc;
      if (op === 'A') y = Math.max(0, y - Number(n || 1));
      else if (op === 'K') {
        assert.equal(n, '2', 'only whole lines are cleared');
        lines[y] = '';
      } else {
        lines.splice(y + 1);
        lines[y] = lines[y]!.slice(0, x);
      }
      i += 1 + all.length;
      continue;
    }
    const c = bytes[i++]!;
    assert.notEqual(
      c,
      '\x1b',
      `an escape sequence the model does not know: ${JSON.stringify(bytes.slice(i - 1))}`,
    );
    if (c === '\n') {
      y++;
      x = 0;
      if (lines.length <= y) lines.push('');
    } else if (c === '\r') x = 0;
    else {
      const line = lines[y]!.padEnd(x);
      lines[y] = line.slice(0, x) + c + line.slice(x + 1);
      x++;
    }
  }
  return lines;
}

const tty = { tty: true, columns: 200 };
const above = 'Live status (redrawn as it changes; Ctrl-C stops):\n';

test('on a terminal the table is redrawn in place: the screen shows the current table once, below what was printed before it', () => {
  let bytes = above + renderUpdate(undefined, start, tty);
  assert.deepEqual(screen(bytes), [above.trimEnd(), ...tableLines(start, 200), '']);
  // A suspend, a new object in another namespace, two deletions (the table shrinks), and back.
  const snapshots = [start, suspended, withDefault, deleted, start];
  for (let i = 1; i < snapshots.length; i++) {
    const update = renderUpdate(snapshots[i - 1], snapshots[i]!, tty);
    assert.notEqual(update, '', 'a change writes something');
    bytes += update;
    assert.deepEqual(
      screen(bytes),
      [above.trimEnd(), ...tableLines(snapshots[i]!, 200), ''],
      `after update ${i}`,
    );
  }
});

test('on a terminal a change rewrites from the first line that differs, and no change writes nothing', () => {
  assert.equal(renderUpdate(start, start, tty), '');
  const update = renderUpdate(start, suspended, tty);
  // Header, platform unchanged; apps is line 3 of 4: up 2, rewrite apps and infra, clear below.
  assert.ok(update.startsWith('\x1b[2A\r'), JSON.stringify(update));
  assert.equal(update.split('\x1b[2K').length - 1, 2);
  assert.ok(update.endsWith('\x1b[J'));
  assert.match(update, /mooring-demo\s+kustomization\/apps\s+main@sha1:6938a47\s+True\s+True/);
});

test('on a terminal no line is wider than it, so cursor-up always finds the top of the table', () => {
  const long = [row('Kustomization', 'apps', { message: 'x'.repeat(300) })];
  for (const l of tableLines(long, 60)) assert.ok(l.length <= 60, l);
  const bytes = renderUpdate(undefined, long, { tty: true, columns: 60 });
  assert.deepEqual(
    screen(bytes + renderUpdate(long, start, { tty: true, columns: 60 })).slice(0, -1),
    tableLines(start, 60),
  );
});

test('to a pipe: the table once, then one plain line per changed, added or deleted row, never an escape sequence', () => {
  const plain = { tty: false };
  const first = renderUpdate(undefined, start, plain);
  assert.deepEqual(first.trimEnd().split('\n'), tableLines(start));
  assert.equal(renderUpdate(start, start, plain), '');
  const changed = renderUpdate(start, suspended, plain).trimEnd().split('\n');
  assert.equal(changed.length, 1);
  assert.match(
    changed[0]!,
    /^ {3}mooring-demo\s+kustomization\/apps\s+main@sha1:6938a47\s+True\s+True\s+Applied/,
  );
  const added = renderUpdate(suspended, withDefault, plain).trimEnd().split('\n');
  assert.deepEqual(added.length, 1);
  assert.match(added[0]!, /zz-team\s+gitrepository\/platform\s+\S+\s+False\s+Unknown/);
  const gone = renderUpdate(withDefault, deleted, plain).trimEnd().split('\n');
  assert.equal(gone.length, 2);
  assert.match(gone.join('\n'), /mooring-demo\s+kustomization\/apps\s.*\(deleted\)/);
  assert.match(gone.join('\n'), /zz-team\s+gitrepository\/platform\s.*\(deleted\)/);
  for (const s of [first, ...changed, ...added, ...gone]) assert.ok(!s.includes('\x1b'), s);
  // The changed line lines up with the table above it.
  assert.equal(changed[0]!.indexOf('main@sha1'), tableLines(start)[1]!.indexOf('main@sha1'));
});

test('a row shows the object as `mooring get` does, with commits cut to 7 digits', () => {
  const sha = '6938a470a556c64cfef52cefedfe41a5abbc6475';
  const r = statusRowOf('Kustomization', {
    apiVersion: 'kustomize.mooring.dev/v1',
    kind: 'Kustomization',
    metadata: { name: 'apps', namespace: 'default' },
    spec: { suspend: true },
    status: {
      lastAppliedRevision: `main@sha1:${sha}`,
      conditions: [{ type: 'Ready', status: 'True', message: `Applied revision:\n main@sha1:${sha}` }],
    },
  });
  assert.deepEqual(r, {
    namespace: 'default',
    kind: 'Kustomization',
    name: 'apps',
    revision: 'main@sha1:6938a47',
    suspended: 'True',
    ready: 'True',
    message: 'Applied revision: main@sha1:6938a47',
  });
  const fresh = statusRowOf('GitRepository', {
    apiVersion: 'v1',
    kind: 'GitRepository',
    metadata: { name: 'p' },
  });
  assert.equal(fresh.ready, 'Unknown');
  assert.equal(fresh.suspended, 'False');
});

test('followStatus writes the table, then only changes; a failed list keeps the table; abort ends it', async () => {
  const rounds: (StatusRow[] | Error)[] = [
    start,
    start,
    new Error('API server restarting'),
    suspended,
    suspended,
  ];
  const stop = new AbortController();
  let written = '';
  await followStatus({
    rows: async () => {
      const r = rounds.shift();
      if (rounds.length === 0) stop.abort();
      if (r instanceof Error || r === undefined) throw r ?? new Error('done');
      return r;
    },
    write: (s) => (written += s),
    output: () => ({ tty: false }),
    signal: stop.signal,
    everyMs: 0,
  });
  assert.equal(
    written,
    renderUpdate(undefined, start, { tty: false }) + renderUpdate(start, suspended, { tty: false }),
  );
});

test('followStatus draws a fresh table after the terminal is resized', async () => {
  let columns = 200;
  const stop = new AbortController();
  const rounds = [start, start, start];
  let written = '';
  await followStatus({
    rows: async () => {
      const r = rounds.shift()!;
      if (rounds.length === 1) columns = 80;
      if (rounds.length === 0) stop.abort();
      return r;
    },
    write: (s) => (written += s),
    output: () => ({ tty: true, columns }),
    signal: stop.signal,
    everyMs: 0,
  });
  // 200 columns, then at 80 a fresh table (its lines may differ) instead of a cursor-up.
  assert.equal(
    written,
    renderUpdate(undefined, start, { tty: true, columns: 200 }) +
      renderUpdate(undefined, start, { tty: true, columns: 80 }),
  );
});
