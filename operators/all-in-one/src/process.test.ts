// The operator programs as real processes, started the way the README says. The README's
// all-in-one command used to fail with `listen EADDRINUSE ... :::9090` (the artifact server and
// the event server both defaulted to :9090) and then hang, the artifact server still open.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { test } from 'node:test';
import { eventually, testCluster, testNamespace } from '@mooring/test/harness';

const repoRoot = join(import.meta.dirname, '../../..');
/** A hung process fails the test here rather than holding the run; passing never waits on it. */
const PATIENCE = { timeout: 180_000 };

interface Run {
  child: ChildProcess;
  /** JSON log lines from stdout, parsed. */
  logs: Record<string, unknown>[];
  stderr: () => string;
  exited: Promise<number | null>;
}

function start(entry: string, args: string[], env: Record<string, string> = {}): Run {
  const child = spawn(process.execPath, ['--import', 'tsx', entry, ...args], {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: Record<string, unknown>[] = [];
  createInterface({ input: child.stdout! }).on('line', (l) => {
    try {
      logs.push(JSON.parse(l) as Record<string, unknown>);
    } catch {
      logs.push({ text: l });
    }
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d));
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  return { child, logs, stderr: () => stderr, exited };
}

/** The README's `npm run operators -- ...` line, with its paths moved to this test's. */
function readmeCommand(kubeconfig: string, storage: string): { entry: string; args: string[] } {
  const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
  const line = /^npm run operators -- (.+)$/m.exec(readme);
  assert.ok(line, 'README.md shows `npm run operators -- ...`');
  const script = (
    JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    }
  ).scripts.operators!;
  const entry = /^node --import tsx (\S+)$/.exec(script)?.[1];
  assert.ok(entry, `npm run operators is ${script}`);
  const args = line[1]!
    .trim()
    .split(/\s+/)
    .map((a) => (a === '.mooring/kubeconfig' ? kubeconfig : a === '.mooring/storage' ? storage : a));
  assert.deepEqual(
    args.filter((a) => a.startsWith('--')),
    ['--kubeconfig', '--storage-path'],
    'the README command this test runs',
  );
  return { entry, args };
}

const logged = (run: Run, msg: string) => run.logs.find((l) => l.msg === msg);

test(
  "the README's all-in-one command starts every operator on its defaults and exits 0 on SIGTERM",
  PATIENCE,
  async (t) => {
    const { kubeconfig } = await testCluster();
    // Only this test's namespace, through the twin so the command line stays the README's: the
    // test cluster is shared with tests running beside this one.
    const namespace = await testNamespace(t, 'all-in-one');
    const storage = await mkdtemp(join(tmpdir(), 'mooring-all-in-one-'));
    t.after(() => rm(storage, { recursive: true, force: true }));
    const { entry, args } = readmeCommand(kubeconfig, storage);
    const run = start(entry, args, { MOORING_WATCH_NAMESPACE: namespace });
    t.after(() => run.child.kill('SIGKILL'));
    const early = run.exited.then((code) => {
      throw new Error(`exited ${code} before it started: ${run.stderr()}`);
    });
    early.catch(() => {});

    const started = await Promise.race([
      early,
      eventually('the operators to start', async () => logged(run, 'operator started'), 120_000),
    ]);
    assert.deepEqual(started.operators, ['source', 'kustomize', 'notification', 'image-automation']);
    assert.equal(started.metrics, 8080);
    assert.equal(started.health, 9440);
    assert.match(String(logged(run, 'artifact server listening')?.storageAddr), /:9090$/);
    const servers = logged(run, 'event and webhook servers listening');
    assert.equal(servers?.eventsPort, 9690, 'the event server moves off :9090 in the all-in-one process');
    assert.equal(servers?.receiverPort, 9292);
    // Every informer of the four operators has listed.
    await eventually(
      '/readyz to pass',
      async () => {
        const res = await fetch('http://127.0.0.1:9440/readyz').catch(() => undefined);
        return res?.status === 200 || undefined;
      },
      120_000,
    );

    run.child.kill('SIGTERM');
    assert.equal(await run.exited, 0, run.stderr());
    assert.equal(run.stderr(), '');
  },
);

test(
  'a port already taken stops the all-in-one process with exit 1 and one line naming the flag',
  PATIENCE,
  async (t) => {
    const { kubeconfig } = await testCluster();
    const storage = await mkdtemp(join(tmpdir(), 'mooring-all-in-one-'));
    t.after(() => rm(storage, { recursive: true, force: true }));
    const busy = createServer();
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r));
    t.after(() => new Promise((r) => busy.close(r)));
    const port = (busy.address() as { port: number }).port;
    const { entry, args } = readmeCommand(kubeconfig, storage);
    // Everything else on free ports, and the event server, which starts after the artifact
    // server is up, on the taken one.
    const run = start(entry, [
      ...args,
      '--metrics-addr=127.0.0.1:0',
      '--health-addr=127.0.0.1:0',
      '--storage-addr=127.0.0.1:0',
      '--receiver-addr=127.0.0.1:0',
      `--events-listen-addr=127.0.0.1:${port}`,
    ]);
    t.after(() => run.child.kill('SIGKILL'));
    assert.equal(await run.exited, 1, run.stderr());
    assert.equal(
      run.stderr(),
      `mooring-operators: the notification operator cannot listen on 127.0.0.1:${port} (--events-listen-addr): the address is already in use\n`,
    );
    assert.ok(logged(run, 'artifact server listening'), 'the source operator had started before');
  },
);

test('a bad --concurrent-ssa is exit 2 with one line, alone and all-in-one', PATIENCE, async () => {
  const cases: { entry: string; args: string[]; env: Record<string, string>; line: string }[] = [
    {
      entry: 'operators/kustomize/src/main.ts',
      args: ['--concurrent-ssa', 'eight'],
      env: {},
      line: 'mooring-kustomize: --concurrent-ssa must be a whole number from 1 to 1000, got "eight"',
    },
    {
      entry: 'operators/all-in-one/src/main.ts',
      args: ['--only', 'kustomize'],
      env: { MOORING_CONCURRENT_SSA: '0' },
      line: 'mooring-operators: MOORING_CONCURRENT_SSA (twin of --concurrent-ssa) must be a whole number from 1 to 1000, got "0"',
    },
  ];
  for (const c of cases) {
    const run = start(c.entry, c.args, c.env);
    assert.equal(await run.exited, 2, run.stderr());
    assert.equal(run.stderr(), `${c.line}\n`);
  }
});
