import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { KubeObject } from '@mooring/runtime';
import { testCluster, testNamespace } from '@mooring/test/harness';
import { parseAllDocuments } from 'yaml';
import { mooring } from './run-cli.ts';

const only = (stdout: string) => {
  const docs = parseAllDocuments(stdout).map(
    (d) => d.toJS() as KubeObject & { spec: Record<string, unknown> },
  );
  assert.equal(docs.length, 1);
  return docs[0]!;
};

test('create helmrelease takes Flux’s flags and gives an object the API server accepts', async (t) => {
  const ns = await testNamespace(t, 'cli-hr');
  const { client, kubeconfig } = await testCluster();
  const env = { KUBECONFIG: kubeconfig };
  const dir = mkdtempSync(join(tmpdir(), 'hr-values-'));
  writeFileSync(
    join(dir, 'base.yaml'),
    'replicaCount: 1\nimage:\n  tag: "1.0"\n  pullPolicy: IfNotPresent\n',
  );
  writeFileSync(join(dir, 'prod.yaml'), 'replicaCount: 3\nimage:\n  tag: "1.1"\n');

  const fromRepo = await mooring(
    [
      'create',
      'helmrelease',
      'podinfo',
      '-n',
      ns,
      '--export',
      '--source',
      'HelmRepository/charts',
      '--chart',
      'podinfo',
      '--chart-version',
      '6.x',
      '--target-namespace',
      'apps',
      '--create-target-namespace',
      '--values',
      join(dir, 'base.yaml'),
      '--values',
      join(dir, 'prod.yaml'),
      '--values-from',
      'ConfigMap/overrides',
      '--depends-on',
      'Kustomization/infra',
      '--depends-on',
      'other/db',
      '--crds',
      'CreateReplace',
      '--service-account',
      'deployer',
    ],
    { env },
  );
  assert.equal(fromRepo.code, 0, fromRepo.stderr);
  const hr = only(fromRepo.stdout);
  assert.equal(hr.apiVersion, 'helm.mooring.dev/v2');
  assert.deepEqual(hr.spec.chart, {
    spec: { chart: 'podinfo', version: '6.x', sourceRef: { kind: 'HelmRepository', name: 'charts' } },
  });
  // Later files win key by key, as `helm -f base -f prod` merges them.
  assert.deepEqual(hr.spec.values, { replicaCount: 3, image: { tag: '1.1', pullPolicy: 'IfNotPresent' } });
  assert.deepEqual(hr.spec.dependsOn, [
    { kind: 'Kustomization', name: 'infra' },
    { namespace: 'other', name: 'db' },
  ]);
  assert.deepEqual(hr.spec.install, { createNamespace: true, crds: 'CreateReplace' });
  await client.apply(hr, { fieldManager: 'mooring-cli-test', dryRun: true });

  const fromRef = await mooring(
    ['create', 'hr', 'agent', '-n', ns, '--export', '--chart-ref', 'ocirepository/agent-chart'],
    { env },
  );
  assert.equal(fromRef.code, 0, fromRef.stderr);
  const ref = only(fromRef.stdout);
  assert.deepEqual(ref.spec.chartRef, { kind: 'OCIRepository', name: 'agent-chart' });
  await client.apply(ref, { fieldManager: 'mooring-cli-test', dryRun: true });

  const [both, badKind, badCrds] = await Promise.all([
    mooring(
      [
        'create',
        'hr',
        'x',
        '-n',
        ns,
        '--export',
        '--chart-ref',
        'HelmChart/c',
        '--source',
        'HelmRepository/r',
      ],
      { env },
    ),
    mooring(['create', 'hr', 'x', '-n', ns, '--export', '--source', 'Bucket/b', '--chart', 'c'], { env }),
    mooring(['create', 'hr', 'x', '-n', ns, '--export', '--chart-ref', 'HelmChart/c', '--crds', 'Replace'], {
      env,
    }),
  ]);
  assert.equal(both.code, 2);
  assert.match(both.stderr, /either --source with --chart, or --chart-ref/);
  assert.match(
    badKind.stderr,
    /--source kind 'Bucket' is not one of HelmRepository, GitRepository, OCIRepository/,
  );
  assert.match(badCrds.stderr, /--crds 'Replace' is not one of Skip, Create, CreateReplace/);

  const applied = await mooring(
    ['create', 'hr', 'agent', '-n', ns, '--chart-ref', 'OCIRepository/agent-chart'],
    { env },
  );
  assert.equal(applied.code, 0, applied.stderr);
  assert.equal(applied.stdout, `✔ HelmRelease ${ns}/agent applied\n`);
  const suspended = await mooring(['suspend', 'helmrelease', 'agent', '-n', ns], { env });
  assert.equal(suspended.code, 0, suspended.stderr);
  const listed = await mooring(['get', 'helmreleases', '-n', ns], { env });
  assert.equal(listed.code, 0, listed.stderr);
  assert.match(listed.stdout, /^agent\s.*True/m);
});
