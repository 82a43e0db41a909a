import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  GitServer,
  kubectl,
  type ObjectWithConditions,
  testCluster,
  testNamespace,
  waitForReady,
} from '@mooring/test/harness';
import { matchServedKind, parseTraceTarget } from '../src/trace-kind.ts';
import { startGitOpsOperators } from './gitops-operators.ts';
import { mooring } from './run-cli.ts';

const DEPLOYMENT = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: model-server
spec:
  replicas: 1
  selector:
    matchLabels: {app: model-server}
  template:
    metadata:
      labels: {app: model-server}
    spec:
      containers:
        - name: server
          image: registry.example/model-server:1.0.0
`;

// A child Kustomization in Git, so the parent applies it: the shape of a bootstrap chain.
const CHILD = `apiVersion: kustomize.mooring.dev/v1
kind: Kustomization
metadata:
  name: team
spec:
  interval: 1h
  path: ./team
  prune: true
  sourceRef:
    kind: GitRepository
    name: stack
`;

const configMap = (name: string): string => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n`;

/** The value printed after `label:` on its own line of the output. */
function field(out: string, label: string, nth = 0): string | undefined {
  const values = [...out.matchAll(new RegExp(`^${label}: +(.*)$`, 'gm'))].map((m) => m[1]);
  return values[nth];
}

test('trace names the Kustomization, its path and revision, and the GitRepository, up through a chain', async (t) => {
  const ns = await testNamespace(t, 'cli-trace');
  const { kubeconfig } = await testCluster();
  const env = { KUBECONFIG: kubeconfig };
  const git = await GitServer.start();
  t.after(() => git.close());
  const repo = await git.createRepo('stack');
  const commit = await repo.commit({
    'apps/kustomization.yaml': 'resources:\n  - settings.yaml\n  - deployment.yaml\n',
    'apps/settings.yaml': configMap('settings'),
    'apps/deployment.yaml': DEPLOYMENT,
    'clusters/kustomization.yaml': 'resources:\n  - team.yaml\n',
    'clusters/team.yaml': CHILD,
    'team/kustomization.yaml': 'resources:\n  - team-settings.yaml\n',
    'team/team-settings.yaml': configMap('team-settings'),
  });
  await startGitOpsOperators(t, ns);

  for (const args of [
    ['create', 'source', 'git', 'stack', '--url', repo.url, '--branch', 'main', '--interval', '1h'],
    [
      'create',
      'ks',
      'apps',
      '--source',
      'GitRepository/stack',
      '--path',
      './apps',
      '--prune',
      '--interval',
      '1h',
    ],
    [
      'create',
      'ks',
      'root',
      '--source',
      'GitRepository/stack',
      '--path',
      './clusters',
      '--prune',
      '--interval',
      '1h',
    ],
  ]) {
    const r = await mooring([...args, '-n', ns], { env });
    assert.equal(r.code, 0, r.stderr);
  }
  const revision = `main@sha1:${commit}`;
  const applied = (ks: ObjectWithConditions): boolean => ks.status?.lastAppliedRevision === revision;
  const ksKey = (name: string) => ({
    apiVersion: 'kustomize.mooring.dev/v1',
    kind: 'Kustomization',
    namespace: ns,
    name,
  });
  await Promise.all(
    ['apps', 'root', 'team'].map((name) => waitForReady(ksKey(name), 'True', applied, 90_000)),
  );

  // kubectl's spellings of one kind all reach the same object.
  const [byWord, bySlash, byGroup] = await Promise.all([
    mooring(['trace', 'deployment', 'model-server', '-n', ns], { env }),
    mooring(['trace', 'Deployment/model-server', '-n', ns], { env }),
    mooring(['trace', 'deployments.apps', 'model-server', '-n', ns, '--api-version', 'apps/v1'], { env }),
  ]);
  assert.equal(byWord.code, 0, `${byWord.stdout}${byWord.stderr}`);
  assert.equal(bySlash.stdout, byWord.stdout);
  assert.equal(byGroup.stdout, byWord.stdout);
  const out = byWord.stdout;
  assert.equal(field(out, 'Object'), 'Deployment/model-server');
  assert.equal(field(out, 'Namespace'), ns);
  assert.match(field(out, 'Status') ?? '', /^(InProgress|Current|Failed) - /);
  assert.equal(field(out, 'Managed by'), `Kustomization ${ns}/apps`);
  assert.equal(field(out, 'Kustomization'), 'apps');
  assert.equal(field(out, 'Path'), './apps');
  assert.equal(field(out, 'Revision'), revision);
  assert.match(field(out, 'Ready') ?? '', /^True - /);
  assert.equal(field(out, 'Source'), `GitRepository ${ns}/stack`);
  assert.equal(field(out, 'GitRepository'), 'stack');
  assert.equal(field(out, 'URL'), repo.url);
  assert.equal(field(out, 'Branch'), 'main');
  assert.equal(field(out, 'Revision', 1), revision);
  assert.equal(out.split('\n---\n').length, 3, out);
  // `apps` was created by hand, not from Git: the chain ends there.
  assert.equal(field(out, 'Managed by', 1), undefined, out);

  // A ConfigMap applied by `team`, which `root` applied: both levels, the shared source once.
  const chain = await mooring(['trace', 'configmap', 'team-settings', '-n', ns], { env });
  assert.equal(chain.code, 0, `${chain.stdout}${chain.stderr}`);
  const blocks = chain.stdout.split('\n---\n');
  assert.deepEqual(
    blocks.map((b) => b.split('\n')[0]),
    [
      'Object:         ConfigMap/team-settings',
      'Kustomization:  team',
      'GitRepository:  stack',
      'Kustomization:  root',
    ],
    chain.stdout,
  );
  assert.equal(field(chain.stdout, 'Managed by'), `Kustomization ${ns}/team`);
  assert.equal(field(chain.stdout, 'Managed by', 1), `Kustomization ${ns}/root`);
  assert.equal(field(blocks[1] ?? '', 'Path'), './team');
  assert.equal(field(blocks[3] ?? '', 'Path'), './clusters');
  assert.equal(field(blocks[3] ?? '', 'Source'), `GitRepository ${ns}/stack`);

  // A Mooring object traces like any other, by its short name.
  const child = await mooring(['trace', 'ks', 'team', '-n', ns], { env });
  assert.equal(child.code, 0, `${child.stdout}${child.stderr}`);
  assert.equal(field(child.stdout, 'Object'), 'Kustomization/team');
  assert.equal(field(child.stdout, 'Managed by'), `Kustomization ${ns}/root`);
  assert.equal(field(child.stdout, 'Kustomization'), 'root');

  // Owner labels copied onto an object by hand: reported, and the trace fails.
  await kubectl('create', 'configmap', 'copied', '-n', ns);
  await kubectl(
    'label',
    'configmap',
    'copied',
    '-n',
    ns,
    'kustomize.mooring.dev/name=apps',
    `kustomize.mooring.dev/namespace=${ns}`,
  );
  const copied = await mooring(['trace', 'configmap', 'copied', '-n', ns], { env });
  assert.equal(copied.code, 1, `${copied.stdout}${copied.stderr}`);
  assert.equal(
    field(copied.stdout, 'Managed by'),
    `Kustomization ${ns}/apps by its labels only: not in its inventory`,
    `${copied.stdout}${copied.stderr}`,
  );
  assert.match(
    copied.stderr,
    new RegExp(
      `^✗ ConfigMap ${ns}/copied carries the labels of Kustomization ${ns}/apps but is not in its inventory`,
      'm',
    ),
  );

  // No labels at all: one sentence, exit 1.
  await kubectl('create', 'configmap', 'loose', '-n', ns);
  const loose = await mooring(['trace', 'cm', 'loose', '-n', ns], { env });
  assert.equal(loose.code, 1, loose.stderr);
  assert.equal(loose.stdout, '');
  assert.equal(
    loose.stderr,
    `✗ ConfigMap ${ns}/loose is not managed by Mooring: it has no kustomize.mooring.dev/name or helm.mooring.dev/name label, so no Kustomization or HelmRelease applied it.\n`,
  );

  const [unknown, missing] = await Promise.all([
    mooring(['trace', 'frobnicator', 'x', '-n', ns], { env }),
    mooring(['trace', 'deployment', 'nope', '-n', ns], { env }),
  ]);
  assert.equal(unknown.code, 2, unknown.stderr);
  assert.match(unknown.stderr, /^✗ the cluster serves no kind 'frobnicator': check the spelling/);
  assert.equal(missing.code, 1, missing.stderr);
  assert.match(
    missing.stderr,
    new RegExp(`^✗ Deployment ${ns}/nope not found: list them with 'kubectl get deployments -n ${ns}'`),
  );
});

test('kind words resolve as kubectl resolves them, core group first', () => {
  const lists = [
    {
      groupVersion: 'v1',
      resources: [
        { name: 'events', singularName: 'event', kind: 'Event', namespaced: true, shortNames: ['ev'] },
        {
          name: 'configmaps',
          singularName: 'configmap',
          kind: 'ConfigMap',
          namespaced: true,
          shortNames: ['cm'],
        },
      ],
    },
    {
      groupVersion: 'apps/v1',
      resources: [
        {
          name: 'deployments',
          singularName: 'deployment',
          kind: 'Deployment',
          namespaced: true,
          shortNames: ['deploy'],
        },
        { name: 'deployments/scale', singularName: '', kind: 'Scale', namespaced: true },
      ],
    },
    {
      groupVersion: 'events.k8s.io/v1',
      resources: [
        { name: 'events', singularName: 'event', kind: 'Event', namespaced: true, shortNames: ['ev'] },
      ],
    },
  ];
  const cases: [string, string | undefined][] = [
    ['deploy', 'apps/v1 Deployment'],
    ['Deployment', 'apps/v1 Deployment'],
    ['deployments.apps', 'apps/v1 Deployment'],
    ['deployment.v1.apps', 'apps/v1 Deployment'],
    ['cm', 'v1 ConfigMap'],
    ['events', 'v1 Event'],
    ['events.events.k8s.io', 'events.k8s.io/v1 Event'],
    ['scale', undefined],
    ['deployments.batch', undefined],
  ];
  for (const [word, want] of cases) {
    const got = matchServedKind(word, lists);
    assert.equal(got ? `${got.apiVersion} ${got.kind}` : undefined, want, word);
  }

  assert.deepEqual(parseTraceTarget(['Deployment/web']), { kind: 'Deployment', name: 'web' });
  assert.deepEqual(parseTraceTarget(['deploy', 'web']), { kind: 'deploy', name: 'web' });
  assert.deepEqual(parseTraceTarget(['source', 'git', 'app']), {
    kind: 'GitRepository',
    name: 'app',
    apiVersion: 'source.mooring.dev/v1',
  });
  for (const words of [['web'], ['Deployment/'], ['a', 'b', 'c'], ['Deployment/web', 'x']])
    assert.throws(() => parseTraceTarget(words), /give one kind and one name/, words.join(' '));
});
