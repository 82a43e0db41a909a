// `mooring plan --kubeconfig`: the cluster's side of the render (substituteFrom) read as the
// operator reads it, and the head render diffed against the live cluster by server-side dry run.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { testCluster, testNamespace } from '@mooring/test/harness';
import { mooring } from './run-cli.ts';

const git = (dir: string, ...args: string[]) =>
  execFileSync('git', ['-C', dir, ...args], {
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@example.test',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@example.test',
    },
  }).trim();

function commit(dir: string, files: Record<string, string>, message: string): void {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', message);
}

const configMap = (ns: string, version: string) => `apiVersion: v1
kind: ConfigMap
metadata: {name: app, namespace: ${ns}}
data: {greeting: "\${greeting}", version: "${version}"}
`;

test('plan --kubeconfig reads substituteFrom from the cluster and dry-runs the head against it', async (t) => {
  const ns = await testNamespace(t, 'cli-plan');
  const { client, kubeconfig } = await testCluster();
  const dir = mkdtempSync(join(tmpdir(), 'mooring-plan-live-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'remote', 'add', 'origin', 'https://git.example/acme/live');
  commit(
    dir,
    {
      'clusters/test/sync.yaml': `apiVersion: source.mooring.dev/v1
kind: GitRepository
metadata: {name: live, namespace: ${ns}}
spec: {url: https://git.example/acme/live, interval: 1m}
---
apiVersion: kustomize.mooring.dev/v1
kind: Kustomization
metadata: {name: app, namespace: ${ns}}
spec:
  interval: 10m
  sourceRef: {kind: GitRepository, name: live}
  path: ./app
  prune: true
  postBuild:
    substituteFrom: [{kind: ConfigMap, name: vars}]
`,
      'app/configmap.yaml': configMap(ns, '1'),
    },
    'base',
  );
  commit(dir, { 'app/configmap.yaml': configMap(ns, '2') }, 'head');
  await client.create({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'vars', namespace: ns },
    data: { greeting: 'hello' },
  });
  await client.create({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'app', namespace: ns },
    data: { greeting: 'hello', version: '1' },
  });

  const offline = await mooring(['plan', '--repo', dir, '--base', 'HEAD~1', '--head', 'HEAD']);
  assert.equal(offline.code, 2, offline.stderr);
  assert.match(
    offline.stdout,
    /substituteFrom \(ConfigMap vars\) is read from the cluster: its variables are shown as \$\{name\}/,
  );
  assert.match(offline.stdout, /greeting: \$\{greeting\}/);
  assert.doesNotMatch(offline.stdout, /against the cluster/);

  const live = await mooring([
    'plan',
    '--repo',
    dir,
    '--base',
    'HEAD~1',
    '--head',
    'HEAD',
    '--kubeconfig',
    kubeconfig,
  ]);
  assert.equal(live.code, 2, live.stderr);
  assert.doesNotMatch(live.stdout, /\$\{greeting\}/);
  assert.doesNotMatch(live.stdout, /read from the cluster: its variables/);
  const [, cluster] = live.stdout.split('against the cluster (server-side dry run)');
  assert.ok(cluster, live.stdout);
  assert.match(cluster, /^: 1 objects would change/);
  assert.match(cluster, /configured ConfigMap\/[\w-]+\/app/);
  assert.match(cluster, /- {2}version: "1"\n\+ {2}version: "2"/);
  assert.match(cluster, /\+ {4}kustomize\.mooring\.dev\/name: app/);
  // The dry run wrote nothing.
  const after = await client.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: 'app' });
  assert.equal((after as { data?: Record<string, string> }).data?.version, '1');
});
