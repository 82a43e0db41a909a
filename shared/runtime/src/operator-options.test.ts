import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  describeOptions,
  type OperatorOptions,
  OptionsError,
  type ParseContext,
  parseOperatorOptions,
  usage,
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
        extraFlags: { only: { type: 'string' }, dry: { type: 'boolean' }, absent: { type: 'string' } },
      },
    );
    assert.equal(got.concurrent, 2);
    assert.deepEqual(got.extra, { only: 'source,kustomize', dry: true, absent: undefined });
  });

  it('refuses an extra flag that shadows a shared one', () => {
    assert.throws(() => parse([], {}, { extraFlags: { concurrent: { type: 'string' } } }), /clashes/);
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
});
