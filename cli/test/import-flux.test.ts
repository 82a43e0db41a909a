import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { KubeObject } from '@mooring/runtime';
import { testCluster, testNamespace } from '@mooring/test/harness';
import { parseAllDocuments } from 'yaml';
import { mooring } from './run-cli.ts';

const FLUX = `# the app's source
apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata:
  name: app
  annotations:
    reconcile.fluxcd.io/requestedAt: "2024-01-01T00:00:00Z"
spec:
  url: https://example.com/app.git
  interval: 1m
  ref:
    branch: main
  gitImplementation: go-git # gone in Flux v1; Mooring never had it
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: app
spec:
  interval: 10m
  prune: true
  sourceRef:
    apiVersion: source.toolkit.fluxcd.io/v1
    kind: GitRepository
    name: app
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels:
    kustomize.toolkit.fluxcd.io/name: app
    toolkit.fluxcd.io/tenant: team-a
  annotations:
    kustomize.toolkit.fluxcd.io/ssa: Merge
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: chart
`;

test('import-flux rewrites groups, labels and annotations, keeps comments and reports what Mooring lacks', async (t) => {
  const ns = await testNamespace(t, 'cli-import');
  const { client } = await testCluster();
  const dir = await mkdtemp(join(tmpdir(), 'mooring-cli-flux-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, 'flux.yaml'), FLUX);
  const r = await mooring(['import-flux', dir]);
  assert.equal(r.code, 0, r.stderr);
  assert.ok(!r.stdout.includes('fluxcd.io/') || r.stdout.includes('helm.toolkit.fluxcd.io/v2'));
  assert.match(r.stdout, /^# the app's source$/m);
  const docs = parseAllDocuments(r.stdout).map((d) => d.toJS() as KubeObject);
  assert.equal(docs[0]!.apiVersion, 'source.mooring.dev/v1');
  assert.deepEqual(docs[0]!.metadata.annotations, {
    'reconcile.mooring.dev/requestedAt': '2024-01-01T00:00:00Z',
  });
  assert.equal(
    (docs[1]!.spec as { sourceRef: { apiVersion: string } }).sourceRef.apiVersion,
    'source.mooring.dev/v1',
  );
  assert.deepEqual(docs[2]!.metadata.labels, {
    'kustomize.mooring.dev/name': 'app',
    'mooring.dev/tenant': 'team-a',
  });
  assert.deepEqual(docs[2]!.metadata.annotations, { 'kustomize.mooring.dev/ssa': 'Merge' });
  assert.equal(docs[3]!.apiVersion, 'helm.toolkit.fluxcd.io/v2');
  assert.match(r.stderr, /GitRepository app: spec\.gitImplementation is not supported by Mooring/);
  assert.match(r.stderr, /HelmRelease chart: helm\.toolkit\.fluxcd\.io\/v2 has no Mooring equivalent/);
  // The converted Kustomization is one the API server takes.
  await client.apply(
    { ...docs[1]!, metadata: { ...docs[1]!.metadata, namespace: ns } },
    { fieldManager: 't', dryRun: true },
  );
  const strict = await mooring(['import-flux', '--strict', join(dir, 'flux.yaml')]);
  assert.equal(strict.code, 1);
});
