// operatorMain, the one `main` of every operator program: flags from one table, one exit-code
// rule, one line on stderr. Nothing here reaches an API server: these operators reconcile
// nothing, so the kubeconfig only has to name one.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { type OperatorDefinition, type OperatorEntry, operatorMain } from './operator.ts';
import { flagChecks } from './operator-options.ts';

const dir = mkdtempSync(join(tmpdir(), 'mooring-operator-main-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const kubeconfig = join(dir, 'kubeconfig');
writeFileSync(
  kubeconfig,
  `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:9", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`,
);
const BASE = [
  '--kubeconfig',
  kubeconfig,
  '--metrics-addr',
  '127.0.0.1:0',
  '--health-addr',
  '127.0.0.1:0',
  '--log-level',
  'silent',
];

/** An operator with one server of its own on `--<name>-addr`, recording what ran in `trace`. */
function serving(name: string, defaultAddr: string, trace: string[]): OperatorDefinition {
  return {
    name,
    extraFlags: {
      [`${name}-addr`]: {
        type: 'string',
        default: defaultAddr,
        help: `Address the ${name} server listens on.`,
        check: flagChecks.listenAddress,
      },
      [`${name}-workers`]: {
        type: 'string',
        default: '8',
        help: 'Workers.',
        check: flagChecks.wholeNumber(1, 1000),
      },
    },
    async start(ctx) {
      const server = createServer();
      const text = ctx.options.extra[`${name}-addr`] as string;
      const [host, port] = [
        text.slice(0, text.lastIndexOf(':')) || undefined,
        text.slice(text.lastIndexOf(':') + 1),
      ];
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(Number(port), host, resolve);
      });
      trace.push(`${name} started`);
      return async () => {
        await new Promise((r) => server.close(r));
        trace.push(`${name} stopped`);
      };
    },
    reconcilers: () => [],
  };
}

async function main(entry: OperatorEntry, argv: string[], env: Record<string, string> = {}) {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const shutdown = new AbortController();
  shutdown.abort();
  const code = await operatorMain(entry, {
    argv,
    env,
    stdout: (t) => stdout.push(t),
    stderr: (l) => stderr.push(l),
    context: { inClusterNamespace: () => undefined },
    run: { shutdown: shutdown.signal },
  });
  return { code, stdout: stdout.join('\n'), stderr };
}

async function taken(): Promise<{ port: number; server: Server }> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { port: (server.address() as { port: number }).port, server };
}

describe('operatorMain', () => {
  it('--help lists the shared flags and each operator’s, with defaults and twins, and exits 0', async () => {
    const trace: string[] = [];
    const entry = { program: 'mooring-two', operators: [serving('alpha', ':7001', trace)] };
    const { code, stdout, stderr } = await main(entry, ['--help']);
    assert.equal(code, 0);
    assert.deepEqual(stderr, []);
    assert.match(stdout, /^Usage: mooring-two \[flags\]/);
    for (const flag of ['--kubeconfig', '--concurrent', '--shutdown-timeout', '--help'])
      assert.ok(stdout.includes(flag), flag);
    assert.match(
      stdout,
      /Flags of the alpha operator:\n {2}--alpha-addr <value> +Address the alpha server listens on\. \(default :7001\) \[MOORING_ALPHA_ADDR\]/,
    );
    assert.deepEqual(trace, [], 'nothing started');
  });

  it('a bad operator flag is exit 2 with one line naming it, before anything starts', async () => {
    const trace: string[] = [];
    const entry = { program: 'mooring-alpha', operators: [serving('alpha', '127.0.0.1:0', trace)] };
    for (const [argv, env, want] of [
      [
        ['--alpha-workers', 'many'],
        {},
        'mooring-alpha: --alpha-workers must be a whole number from 1 to 1000, got "many"',
      ],
      [
        [],
        { MOORING_ALPHA_WORKERS: '0' },
        'mooring-alpha: MOORING_ALPHA_WORKERS (twin of --alpha-workers) must be a whole number from 1 to 1000, got "0"',
      ],
      [['--alpha-addr', 'nowhere'], {}, /^mooring-alpha: --alpha-addr: invalid listen address "nowhere"/],
      [['--concurrent', '0'], {}, /^mooring-alpha: --concurrent must be a whole number/],
    ] as const) {
      const got = await main(entry, [...BASE, ...argv], env);
      assert.equal(got.code, 2, String(argv));
      assert.equal(got.stderr.length, 1);
      if (typeof want === 'string') assert.equal(got.stderr[0], want);
      else assert.match(got.stderr[0]!, want);
    }
    assert.deepEqual(trace, []);
  });

  it('two operators whose defaults share a port are refused before either listens', async () => {
    const trace: string[] = [];
    const entry = {
      program: 'mooring-both',
      operators: [serving('alpha', ':7001', trace), serving('beta', ':7001', trace)],
    };
    const got = await main(entry, BASE);
    assert.equal(got.code, 2);
    assert.deepEqual(got.stderr, [
      'mooring-both: --alpha-addr (:7001) and --beta-addr (:7001) would listen on the same port 7001 in one process; give one of them another address',
    ]);
    assert.deepEqual(trace, []);
    // The entry's own defaults part them, as the all-in-one's do.
    const parted = await main({ ...entry, defaults: { 'beta-addr': { default: '127.0.0.1:0' } } }, [
      ...BASE,
      '--alpha-addr',
      '127.0.0.1:0',
    ]);
    assert.equal(parted.code, 0, parted.stderr.join('\n'));
    assert.deepEqual(trace, ['alpha started', 'beta started', 'alpha stopped', 'beta stopped']);
  });

  it('only the chosen operators’ addresses count', async () => {
    const trace: string[] = [];
    const alpha = serving('alpha', '127.0.0.1:0', trace);
    const free = await taken();
    await new Promise((r) => free.server.close(r));
    const entry = {
      program: 'mooring-some',
      operators: [alpha, serving('beta', `:${free.port}`, trace)],
      select: () => [alpha],
    };
    const got = await main(entry, [...BASE, '--metrics-addr', `127.0.0.1:${free.port}`]);
    assert.equal(got.code, 0, got.stderr.join('\n'));
    assert.deepEqual(trace, ['alpha started', 'alpha stopped']);
  });

  it('a port already taken is exit 1 with one line naming the operator and the flag, and what started is stopped again', async (t) => {
    const busy = await taken();
    t.after(() => new Promise((r) => busy.server.close(r)));
    const trace: string[] = [];
    const entry = {
      program: 'mooring-both',
      operators: [serving('alpha', '127.0.0.1:0', trace), serving('beta', `127.0.0.1:${busy.port}`, trace)],
    };
    const got = await main(entry, BASE);
    assert.equal(got.code, 1);
    assert.deepEqual(got.stderr, [
      `mooring-both: the beta operator cannot listen on 127.0.0.1:${busy.port} (--beta-addr): the address is already in use`,
    ]);
    // alpha's server is closed again, so no open handle keeps the process from exiting.
    assert.deepEqual(trace, ['alpha started', 'alpha stopped']);
  });

  it('the shared metrics server on a taken port is exit 1 too, after the operators are stopped', async (t) => {
    const busy = await taken();
    t.after(() => new Promise((r) => busy.server.close(r)));
    const trace: string[] = [];
    const entry = { program: 'mooring-alpha', operators: [serving('alpha', '127.0.0.1:0', trace)] };
    const got = await main(entry, [...BASE, '--metrics-addr', `127.0.0.1:${busy.port}`]);
    assert.equal(got.code, 1);
    assert.equal(got.stderr.length, 1);
    assert.match(
      got.stderr[0]!,
      new RegExp(`^mooring-alpha: cannot listen on 127\\.0\\.0\\.1:${busy.port} for metrics: .*EADDRINUSE`),
    );
    assert.deepEqual(trace, ['alpha started', 'alpha stopped']);
  });

  it('an unknown flag is exit 2', async () => {
    const got = await main({ program: 'mooring-x', operators: [] }, ['--concurrent-sa', '3']);
    assert.equal(got.code, 2);
    assert.deepEqual(got.stderr, ["mooring-x: Unknown option '--concurrent-sa'; see --help"]);
  });
});
