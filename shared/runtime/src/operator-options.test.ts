import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  checkListenCollisions,
  describeFlags,
  describeOptions,
  type FlagTable,
  flagChecks,
  mergeFlagTables,
  type OperatorOptions,
  OptionsError,
  type ParseContext,
  parseOperatorOptions,
  usage,
  withDefaults,
} from './operator-options.ts';

const outside: ParseContext = { inClusterNamespace: () => undefined };

function parse(
  argv: string[],
  env: Record<string, string | undefined> = {},
  context: ParseContext = outside,
) {
  return parseOperatorOptions(argv, env, context);
}

const DEFAULTS: OperatorOptions = {
  kubeconfig: undefined,
  concurrent: 4,
  metricsAddr: ':8080',
  healthAddr: ':9440',
  leaderElect: false,
  leaderElectionNamespace: 'mooring-system',
  watchNamespace: undefined,
  watchLabelSelector: undefined,
  logLevel: 'info',
  eventsAddr: undefined,
  noCrossNamespaceRefs: false,
  defaultServiceAccount: undefined,
  requeueDependencyMs: 30_000,
  shutdownTimeoutMs: 25_000,
  kubeApiQps: 50,
  kubeApiBurst: 300,
  help: false,
  extra: {},
};

describe('parseOperatorOptions', () => {
  it('has the documented defaults', () => {
    assert.deepEqual(parse([]), DEFAULTS);
  });

  const cases: [string, string[], Record<string, string>, Partial<OperatorOptions>][] = [
    ['--kubeconfig', ['--kubeconfig', '/tmp/kc'], {}, { kubeconfig: '/tmp/kc' }],
    ['KUBECONFIG', [], { KUBECONFIG: '/env/kc' }, { kubeconfig: '/env/kc' }],
    ['--concurrent=8', ['--concurrent=8'], {}, { concurrent: 8 }],
    ['MOORING_CONCURRENT', [], { MOORING_CONCURRENT: '2' }, { concurrent: 2 }],
    ['flag beats env', ['--concurrent', '6'], { MOORING_CONCURRENT: '2' }, { concurrent: 6 }],
    ['--metrics-addr', ['--metrics-addr', '127.0.0.1:0'], {}, { metricsAddr: '127.0.0.1:0' }],
    ['MOORING_HEALTH_ADDR', [], { MOORING_HEALTH_ADDR: ':9441' }, { healthAddr: ':9441' }],
    ['--leader-elect', ['--leader-elect'], {}, { leaderElect: true }],
    ['--leader-elect=true', ['--leader-elect=true'], {}, { leaderElect: true }],
    ['--leader-elect=false beats env', ['--leader-elect=false'], { MOORING_LEADER_ELECT: 'true' }, {}],
    ['MOORING_LEADER_ELECT=1', [], { MOORING_LEADER_ELECT: '1' }, { leaderElect: true }],
    ['MOORING_LEADER_ELECT=FALSE', [], { MOORING_LEADER_ELECT: 'FALSE' }, {}],
    [
      '--leader-election-namespace',
      ['--leader-election-namespace', 'ops'],
      { POD_NAMESPACE: 'pod-ns' },
      { leaderElectionNamespace: 'ops' },
    ],
    ['POD_NAMESPACE', [], { POD_NAMESPACE: 'flux-system' }, { leaderElectionNamespace: 'flux-system' }],
    ['--watch-namespace', ['--watch-namespace', 'apps'], {}, { watchNamespace: 'apps' }],
    ['empty env means unset', [], { MOORING_WATCH_NAMESPACE: '' }, {}],
    [
      '--watch-label-selector',
      ['--watch-label-selector', 'sharding.mooring.dev/key in (shard1)'],
      {},
      { watchLabelSelector: 'sharding.mooring.dev/key in (shard1)' },
    ],
    ['--log-level', ['--log-level', 'debug'], {}, { logLevel: 'debug' }],
    ['MOORING_LOG_LEVEL', [], { MOORING_LOG_LEVEL: 'error' }, { logLevel: 'error' }],
    [
      '--events-addr',
      ['--events-addr', 'http://notification.mooring-system:9090/'],
      {},
      { eventsAddr: 'http://notification.mooring-system:9090/' },
    ],
    ['--no-cross-namespace-refs', ['--no-cross-namespace-refs'], {}, { noCrossNamespaceRefs: true }],
    [
      'MOORING_NO_CROSS_NAMESPACE_REFS',
      [],
      { MOORING_NO_CROSS_NAMESPACE_REFS: 'true' },
      { noCrossNamespaceRefs: true },
    ],
    [
      '--default-service-account',
      ['--default-service-account', 'default'],
      {},
      { defaultServiceAccount: 'default' },
    ],
    ['--requeue-dependency', ['--requeue-dependency', '5s'], {}, { requeueDependencyMs: 5_000 }],
    ['MOORING_SHUTDOWN_TIMEOUT', [], { MOORING_SHUTDOWN_TIMEOUT: '1m30s' }, { shutdownTimeoutMs: 90_000 }],
    ['--shutdown-timeout=0s', ['--shutdown-timeout=0s'], {}, { shutdownTimeoutMs: 0 }],
    ['--help', ['--help'], {}, { help: true }],
    ['-h', ['-h'], {}, { help: true }],
  ];
  for (const [name, argv, env, want] of cases) {
    it(name, () => assert.deepEqual(parse(argv, env), { ...DEFAULTS, ...want }));
  }

  it('defaults the leader election namespace to the in-cluster namespace', () => {
    const got = parse([], {}, { inClusterNamespace: () => 'mooring-prod' });
    assert.equal(got.leaderElectionNamespace, 'mooring-prod');
  });

  const errors: [string, string[], Record<string, string>, RegExp][] = [
    [
      'non-numeric --concurrent',
      ['--concurrent', 'four'],
      {},
      /^--concurrent must be a whole number.*got "four"$/,
    ],
    ['zero --concurrent', ['--concurrent=0'], {}, /--concurrent must be a whole number from 1/],
    [
      'fractional env concurrent',
      [],
      { MOORING_CONCURRENT: '1.5' },
      /^MOORING_CONCURRENT \(twin of --concurrent\) must/,
    ],
    ['bad duration', ['--requeue-dependency', '30'], {}, /^--requeue-dependency: invalid duration "30"/],
    ['zero requeue', ['--requeue-dependency', '0s'], {}, /--requeue-dependency must be at least 1ms/],
    [
      'bad env duration',
      [],
      { MOORING_SHUTDOWN_TIMEOUT: '1 minute' },
      /^MOORING_SHUTDOWN_TIMEOUT \(twin of --shutdown-timeout\): invalid duration/,
    ],
    [
      'bad log level',
      ['--log-level', 'trace'],
      {},
      /^--log-level must be one of debug, info, warn, error, silent, got "trace"$/,
    ],
    [
      'QPS not a whole number',
      ['--kube-api-qps', '2.5'],
      {},
      /^--kube-api-qps must be a whole number from 1 to 100000, got "2.5"$/,
    ],
    [
      'bad address',
      ['--metrics-addr', 'localhost'],
      {},
      /^--metrics-addr: invalid listen address "localhost"/,
    ],
    [
      'bad events URL',
      ['--events-addr', 'notification:9090'],
      {},
      /^--events-addr must be an http or https URL/,
    ],
    [
      'bad boolean env',
      [],
      { MOORING_LEADER_ELECT: 'yes' },
      /^MOORING_LEADER_ELECT \(twin of --leader-elect\) must be true or false/,
    ],
    [
      'bad boolean flag value',
      ['--leader-elect=maybe'],
      {},
      /^--leader-elect must be true or false, got "maybe"$/,
    ],
    ['bad namespace', ['--watch-namespace', 'Apps'], {}, /^--watch-namespace must be a namespace name/],
    [
      'bad service account',
      ['--default-service-account', 'a_b'],
      {},
      /^--default-service-account must be a service account name/,
    ],
    ['unknown flag', ['--concurency', '2'], {}, /Unknown option '--concurency'; see --help$/],
    ['missing value', ['--concurrent'], {}, /--concurrent.*argument missing/],
    ['positional', ['extra'], {}, /Unexpected argument 'extra'/],
  ];
  for (const [name, argv, env, want] of errors) {
    it(`rejects ${name}`, () => {
      assert.throws(
        () => parse(argv, env),
        (err: Error) => {
          assert.ok(err instanceof OptionsError, `${err.name}: ${err.message}`);
          assert.match(err.message, want);
          return true;
        },
      );
    });
  }

  it('parses a program’s extra flags alongside the shared ones', () => {
    const got = parse(
      ['--only', 'source,kustomize', '--dry', '--concurrent', '2'],
      {},
      {
        ...outside,
        extraFlags: {
          only: { type: 'string', help: 'h' },
          dry: { type: 'boolean', help: 'h' },
          absent: { type: 'string', help: 'h' },
          off: { type: 'boolean', help: 'h' },
        },
      },
    );
    assert.equal(got.concurrent, 2);
    assert.deepEqual(got.extra, { only: 'source,kustomize', dry: true, absent: undefined, off: false });
  });

  it('refuses an extra flag that shadows a shared one', () => {
    assert.throws(
      () => parse([], {}, { extraFlags: { concurrent: { type: 'string', help: 'h' } } }),
      /clashes/,
    );
  });
});

describe('extra flags are declared like the shared ones', () => {
  const flags: FlagTable = {
    'concurrent-ssa': { type: 'string', default: '8', help: 'h', check: flagChecks.wholeNumber(1, 1000) },
    'storage-addr': { type: 'string', default: ':9090', help: 'h', check: flagChecks.listenAddress },
    'git-backend': {
      type: 'string',
      default: 'cli',
      help: 'h',
      check: flagChecks.oneOf('cli', 'isomorphic'),
    },
    'adv-addr': { type: 'string', help: 'h', check: flagChecks.hostPort },
    ttl: { type: 'string', default: '60s', help: 'h', check: flagChecks.duration(0) },
    dry: { type: 'boolean', help: 'h' },
    'listen-addr': {
      type: 'string',
      default: ':9090',
      help: 'h',
      check: flagChecks.listenAddress,
      derive: (get) => (get('events-addr') ? `:${new URL(get('events-addr')!).port}` : undefined),
    },
  };
  const extra = (argv: string[], env: Record<string, string> = {}) =>
    parse(argv, env, { ...outside, extraFlags: flags }).extra;

  it('resolves each from the flag, else its MOORING_ twin, else its default', () => {
    assert.deepEqual(extra([]), {
      'concurrent-ssa': '8',
      'storage-addr': ':9090',
      'git-backend': 'cli',
      'adv-addr': undefined,
      ttl: '60s',
      dry: false,
      'listen-addr': ':9090',
    });
    assert.equal(extra([], { MOORING_CONCURRENT_SSA: '3' })['concurrent-ssa'], '3');
    assert.equal(extra(['--concurrent-ssa', '5'], { MOORING_CONCURRENT_SSA: '3' })['concurrent-ssa'], '5');
    assert.equal(extra([], { MOORING_DRY: 'true' }).dry, true);
    assert.equal(extra(['--dry=false'], { MOORING_DRY: 'true' }).dry, false);
    assert.equal(
      extra(['--adv-addr', 'source.mooring-system.svc.cluster.local.'])['adv-addr'],
      'source.mooring-system.svc.cluster.local.',
    );
  });

  it('derives a default from the shared flags, below the flag and its twin', () => {
    assert.equal(extra(['--events-addr', 'http://localhost:7000/'])['listen-addr'], ':7000');
    assert.equal(
      extra(['--events-addr', 'http://localhost:7000/', '--listen-addr', '127.0.0.1:0'])['listen-addr'],
      '127.0.0.1:0',
    );
  });

  // A bad value used to become the default without a word (`--concurrent-ssa abc` ran with 8).
  const bad: [string, string[], Record<string, string>, RegExp][] = [
    [
      '--concurrent-ssa abc',
      ['--concurrent-ssa', 'abc'],
      {},
      /^--concurrent-ssa must be a whole number from 1 to 1000, got "abc"$/,
    ],
    [
      '--concurrent-ssa 0',
      ['--concurrent-ssa=0'],
      {},
      /^--concurrent-ssa must be a whole number from 1 to 1000, got "0"$/,
    ],
    [
      'MOORING_CONCURRENT_SSA=-1',
      [],
      { MOORING_CONCURRENT_SSA: '-1' },
      /^MOORING_CONCURRENT_SSA \(twin of --concurrent-ssa\) must be a whole number/,
    ],
    [
      '--storage-addr',
      ['--storage-addr', 'localhost'],
      {},
      /^--storage-addr: invalid listen address "localhost"/,
    ],
    [
      '--git-backend',
      ['--git-backend', 'libgit2'],
      {},
      /^--git-backend must be one of cli, isomorphic, got "libgit2"$/,
    ],
    ['--adv-addr', ['--adv-addr', 'http://source/'], {}, /^--adv-addr must be host or host:port/],
    ['--ttl', ['--ttl', '60'], {}, /^--ttl: invalid duration "60"/],
    ['MOORING_DRY', [], { MOORING_DRY: 'maybe' }, /^MOORING_DRY \(twin of --dry\) must be true or false/],
  ];
  for (const [name, argv, env, want] of bad) {
    it(`refuses ${name}`, () => {
      assert.throws(
        () => extra(argv, env),
        (err: Error) => err instanceof OptionsError && want.test(err.message),
      );
    });
  }

  it('merges the tables of several operators; a flag both declare must agree', () => {
    const a: FlagTable = { 'storage-path': { type: 'string', default: '/data', help: 'artifacts' } };
    const b: FlagTable = { 'storage-path': { type: 'string', default: '/data', help: 'tag lists' } };
    assert.deepEqual(Object.keys(mergeFlagTables([a, b, flags])), ['storage-path', ...Object.keys(flags)]);
    const c: FlagTable = { 'storage-path': { type: 'string', default: '/tmp', help: 'other' } };
    assert.throws(() => mergeFlagTables([a, c]), /--storage-path is declared twice/);
  });

  it('a program may change a default, and the docs say so', () => {
    const changed = withDefaults(flags, { 'listen-addr': { default: ':9690', shown: 'else `:9690`' } });
    assert.equal(parse([], {}, { ...outside, extraFlags: changed }).extra['listen-addr'], ':9690');
    assert.match(describeFlags(changed), /\| `--listen-addr` \| `MOORING_LISTEN_ADDR` \| else `:9690` \|/);
    assert.equal(flags['listen-addr']!.default, ':9090', 'the table itself is left alone');
  });
});

describe('checkListenCollisions', () => {
  it('refuses two servers on one port, naming both flags', () => {
    assert.throws(
      () =>
        checkListenCollisions([
          ['storage-addr', ':9090'],
          ['events-listen-addr', ':9090'],
        ]),
      (err: Error) =>
        err instanceof OptionsError &&
        /^--storage-addr \(:9090\) and --events-listen-addr \(:9090\) would listen on the same port 9090/.test(
          err.message,
        ),
    );
    assert.throws(
      () =>
        checkListenCollisions([
          ['a', ':9090'],
          ['b', '127.0.0.1:9090'],
        ]),
      /same port/,
    );
  });

  it('lets ports 0, other ports, other hosts and one metrics-and-health server be', () => {
    checkListenCollisions([
      ['metrics-addr', ':8080'],
      ['health-addr', ':8080'],
      ['storage-addr', '127.0.0.1:0'],
      ['receiver-addr', '127.0.0.1:0'],
      ['events-listen-addr', '127.0.0.1:9090'],
      ['other', '127.0.0.2:9090'],
    ]);
  });
});

describe('describeOptions', () => {
  it('lists every flag with its environment twin and default', () => {
    const lines = describeOptions().split('\n');
    assert.equal(lines[0], '| flag | environment | default | meaning |');
    assert.equal(lines.length, 2 + 16);
    assert.ok(
      lines.includes(
        '| `--concurrent` | `MOORING_CONCURRENT` | `4` | Reconciles run in parallel (per kind). |',
      ),
    );
    assert.ok(lines.some((l) => l.startsWith('| `--kubeconfig` | `KUBECONFIG` |')));
    assert.ok(
      lines.some((l) => l.startsWith('| `--requeue-dependency` | `MOORING_REQUEUE_DEPENDENCY` | `30s` |')),
    );
    assert.ok(
      lines.some((l) => l.startsWith('| `--watch-namespace` | `MOORING_WATCH_NAMESPACE` | all namespaces |')),
    );
  });

  it('usage names every flag', () => {
    const text = usage('source-operator');
    for (const flag of ['--metrics-addr', '--leader-elect', '--events-addr', '--help'])
      assert.ok(text.includes(flag), flag);
  });

  it('usage lists each section’s flags with their defaults and twins', () => {
    const text = usage('mooring-kustomize', [
      {
        title: 'Flags of the kustomize operator',
        flags: { 'concurrent-ssa': { type: 'string', default: '8', help: 'Objects applied in parallel.' } },
      },
    ]);
    assert.match(
      text,
      /\nFlags of the kustomize operator:\n {2}--concurrent-ssa <value> +Objects applied in parallel\. \(default 8\) \[MOORING_CONCURRENT_SSA\]$/,
    );
  });
});
