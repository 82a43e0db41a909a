import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { KubeObject } from '@mooring/runtime';
import { testCluster, testNamespace } from '@mooring/test/harness';
import { parseAllDocuments } from 'yaml';
import { mooring } from './run-cli.ts';

const KS = 'kustomize.mooring.dev/v1';
const SECRET = 's3cr3t-value';
const SECRET_B64 = Buffer.from(SECRET).toString('base64');

async function fixture(
  t: import('node:test').TestContext,
): Promise<{ ns: string; dir: string; env: Record<string, string> }> {
  const ns = await testNamespace(t, 'cli-ks');
  const { client, kubeconfig } = await testCluster();
  const dir = await mkdtemp(join(tmpdir(), 'mooring-cli-ks-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await writeFile(
    join(dir, 'app.yaml'),
    [
      'apiVersion: v1',
      'kind: ConfigMap',
      'metadata:',
      '  name: app',
      'data:',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: postBuild variables, not JavaScript
      '  greeting: ${greeting}',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: postBuild variables, not JavaScript
      '  size: "${replicas}x"',
      '---',
      'apiVersion: v1',
      'kind: Secret',
      'metadata:',
      '  name: creds',
      'stringData:',
      `  password: ${SECRET}`,
      '',
    ].join('\n'),
  );
  await client.create({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'vars', namespace: ns },
    data: { greeting: 'hello' },
  });
  await client.create({
    apiVersion: KS,
    kind: 'Kustomization',
    metadata: { name: 'apps', namespace: ns },
    spec: {
      sourceRef: { kind: 'GitRepository', name: 'repo' },
      interval: '10m',
      prune: true,
      targetNamespace: ns,
      namePrefix: 'p-',
      commonMetadata: { labels: { team: 'ml' } },
      postBuild: { substitute: { replicas: '2' }, substituteFrom: [{ kind: 'ConfigMap', name: 'vars' }] },
    },
  } as KubeObject);
  return { ns, dir, env: { KUBECONFIG: kubeconfig } };
}

test('build kustomization renders as the operator would, and diff shows drift with Secret values masked', async (t) => {
  const { ns, dir, env } = await fixture(t);
  const { client } = await testCluster();
  const built = await mooring(['build', 'kustomization', 'apps', '--path', dir, '-n', ns], { env });
  assert.equal(built.code, 0, built.stderr);
  const objects = parseAllDocuments(built.stdout).map((d) => d.toJS() as KubeObject);
  const cm = objects.find((o) => o.kind === 'ConfigMap')!;
  assert.equal(cm.metadata.name, 'p-app');
  assert.equal(cm.metadata.namespace, ns);
  assert.deepEqual(cm.data, { greeting: 'hello', size: '2x' });
  assert.deepEqual(cm.metadata.labels, {
    team: 'ml',
    'kustomize.mooring.dev/name': 'apps',
    'kustomize.mooring.dev/namespace': ns,
  });

  // Nothing applied yet: both objects would be created, and the secret never shows.
  const fresh = await mooring(['diff', 'kustomization', 'apps', '--path', dir, '-n', ns], { env });
  assert.equal(fresh.code, 1, fresh.stderr);
  assert.match(fresh.stdout, new RegExp(`^► ConfigMap/${ns}/p-app created$`, 'm'));
  assert.match(fresh.stdout, new RegExp(`^► Secret/${ns}/p-creds created$`, 'm'));
  assert.match(fresh.stdout, /^\+ {2}greeting: hello$/m);
  assert.ok(!fresh.stdout.includes(SECRET) && !fresh.stdout.includes(SECRET_B64), fresh.stdout);

  // Applied as the operator applies: no drift, exit 0.
  for (const obj of objects) await client.apply(obj, { fieldManager: 'mooring', force: true });
  const clean = await mooring(['diff', 'ks', 'apps', '--path', dir, '-n', ns], { env });
  assert.equal(clean.code, 0, clean.stdout);
  assert.equal(clean.stdout, '');

  // Hand edits are drift: the changed value shows, the secret's old and new values do not.
  await client.mergePatch(
    { apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: 'p-app' },
    { data: { greeting: 'edited' } },
  );
  await client.mergePatch(
    { apiVersion: 'v1', kind: 'Secret', namespace: ns, name: 'p-creds' },
    { stringData: { password: 'hand-set' } },
  );
  const drift = await mooring(['diff', 'ks', 'apps', '--path', dir, '-n', ns], { env });
  assert.equal(drift.code, 1, drift.stderr);
  assert.match(drift.stdout, /^- {2}greeting: edited$/m);
  assert.match(drift.stdout, /^\+ {2}greeting: hello$/m);
  assert.match(drift.stdout, /^- {2}password: "\*\*\* \(before\)"$/m);
  assert.match(drift.stdout, /^\+ {2}password: "\*\*\* \(after\)"$/m);
  for (const value of [SECRET, SECRET_B64, 'hand-set', Buffer.from('hand-set').toString('base64')])
    assert.ok(!drift.stdout.includes(value), `secret value leaked: ${drift.stdout}`);

  const missing = await mooring(['diff', 'ks', 'apps', '--path', join(dir, 'nope'), '-n', ns], { env });
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /is not a directory: pass the folder that holds the manifests/);
  const noKs = await mooring(['diff', 'ks', 'other', '--path', dir, '-n', ns], { env });
  assert.equal(noKs.code, 2);
  assert.match(noKs.stderr, /Kustomization .*\/other not found: list them with 'mooring get kustomizations/);
});

test('tree kustomization prints the inventory and recurses into child Kustomizations', async (t) => {
  const { ns, env } = await fixture(t);
  const { client } = await testCluster();
  await client.create({
    apiVersion: KS,
    kind: 'Kustomization',
    metadata: { name: 'child', namespace: ns },
    spec: { sourceRef: { kind: 'GitRepository', name: 'repo' }, interval: '10m', prune: true },
  } as KubeObject);
  const inventory = async (name: string, ids: string[]): Promise<void> => {
    await client.applyStatus(
      {
        apiVersion: KS,
        kind: 'Kustomization',
        metadata: { name, namespace: ns },
        status: { inventory: { entries: ids.map((id) => ({ id, v: 'v1' })) } },
      },
      { fieldManager: 'mooring', force: true },
    );
  };
  await inventory('apps', [
    `_${ns}__Namespace`,
    `${ns}_p-app__ConfigMap`,
    `${ns}_child_kustomize.mooring.dev_Kustomization`,
  ]);
  await inventory('child', [`${ns}_p-creds__Secret`]);
  const r = await mooring(['tree', 'kustomization', 'apps', '-n', ns], { env });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(
    r.stdout,
    [
      `Kustomization/${ns}/apps`,
      `├── Namespace/${ns}`,
      `├── ConfigMap/${ns}/p-app`,
      `└── Kustomization/${ns}/child`,
      `    └── Secret/${ns}/p-creds`,
      '',
    ].join('\n'),
  );
  const stats = await mooring(['stats', '-n', ns], { env });
  assert.equal(stats.code, 0, stats.stderr);
  assert.match(stats.stdout, /^Kustomization\s+2\s+2\s+0\s+0\s+-$/m);
  assert.match(stats.stdout, /^GitRepository\s+0\s+0\s+0\s+0\s+0 B$/m);
});

test('tree kustomizationset prints each member with its rollout state, then its inventory; get lists the set', async (t) => {
  const { ns, env } = await fixture(t);
  const { client } = await testCluster();
  await client.create({
    apiVersion: KS,
    kind: 'KustomizationSet',
    metadata: { name: 'agents', namespace: ns },
    spec: {
      interval: '10m',
      generators: [{ list: { elements: [{ cluster: { name: 'edge' } }] } }],
      template: { metadata: { name: 'agent-{{ .cluster.name }}' }, spec: {} },
    },
  } as KubeObject);
  // Status as the operator writes it (no operator runs here): one current member, one unreachable.
  await client.applyStatus(
    {
      apiVersion: KS,
      kind: 'KustomizationSet',
      metadata: { name: 'agents', namespace: ns },
      status: {
        members: [
          { name: 'edge', kustomization: 'apps', ready: 'True', state: 'Current', revision: 'abc123' },
          {
            name: 'far',
            kustomization: 'agent-far',
            ready: 'Unknown',
            state: 'Unreachable',
            message: 'cluster far unreachable',
          },
        ],
        counts: { total: 2, ready: 1, current: 1, failed: 0, unreachable: 1 },
        rollout: { step: 0, phase: 'Complete' },
      },
    },
    { fieldManager: 'mooring', force: true },
  );
  await client.applyStatus(
    {
      apiVersion: KS,
      kind: 'Kustomization',
      metadata: { name: 'apps', namespace: ns },
      status: { inventory: { entries: [{ id: `${ns}_agent-config__ConfigMap`, v: 'v1' }] } },
    },
    { fieldManager: 'mooring', force: true },
  );
  const r = await mooring(['tree', 'kss', 'agents', '-n', ns], { env });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(
    r.stdout,
    [
      `KustomizationSet/${ns}/agents`,
      '├── edge (Current abc123)',
      `│   └── Kustomization/${ns}/apps`,
      `│       └── ConfigMap/${ns}/agent-config`,
      '└── far (Unreachable: cluster far unreachable)',
      `    └── Kustomization/${ns}/agent-far`,
      '',
    ].join('\n'),
  );
  const get = await mooring(['get', 'kustomizationsets', '-n', ns], { env });
  assert.equal(get.code, 0, get.stderr);
  assert.match(get.stdout, /agents/);
});

test('tree kustomizationset prints a HelmRelease member with its release version and chart, then its release objects', async (t) => {
  const { ns, env } = await fixture(t);
  const { client } = await testCluster();
  const HR = 'helm.mooring.dev/v2';
  await client.create({
    apiVersion: KS,
    kind: 'KustomizationSet',
    metadata: { name: 'probes', namespace: ns },
    spec: {
      interval: '10m',
      generators: [{ list: { elements: [{ name: 'first' }] } }],
      template: { apiVersion: HR, kind: 'HelmRelease', metadata: { name: 'probe-{{ .name }}' }, spec: {} },
    },
  } as KubeObject);
  await client.create({
    apiVersion: HR,
    kind: 'HelmRelease',
    metadata: { name: 'probe-first', namespace: ns },
    spec: { interval: '10m', chartRef: { kind: 'HelmChart', name: 'probe' } },
  } as KubeObject);
  // Status as the operators write it (none runs here).
  await client.applyStatus(
    {
      apiVersion: KS,
      kind: 'KustomizationSet',
      metadata: { name: 'probes', namespace: ns },
      status: {
        members: [
          {
            name: 'probe-first',
            kustomization: 'probe-first',
            kind: 'HelmRelease',
            ready: 'True',
            state: 'Current',
            revision: 'abc123',
            appliedRevision: 'probe@0.1.0',
            releaseVersion: 2,
          },
        ],
        counts: { total: 1, ready: 1, current: 1, failed: 0, unreachable: 0 },
        rollout: { step: 0, phase: 'Complete' },
      },
    },
    { fieldManager: 'mooring', force: true },
  );
  await client.applyStatus(
    {
      apiVersion: HR,
      kind: 'HelmRelease',
      metadata: { name: 'probe-first', namespace: ns },
      status: { inventory: { entries: [{ id: `${ns}_probe-first-config__ConfigMap`, v: 'v1' }] } },
    },
    { fieldManager: 'mooring', force: true },
  );
  const r = await mooring(['tree', 'kss', 'probes', '-n', ns], { env });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(
    r.stdout,
    [
      `KustomizationSet/${ns}/probes`,
      '└── probe-first (Current abc123)',
      `    └── HelmRelease/${ns}/probe-first (release v2, chart probe@0.1.0)`,
      `        └── ConfigMap/${ns}/probe-first-config`,
      '',
    ].join('\n'),
  );
});
