import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { KINDS } from '@mooring/api';
import type { KubeObject } from '@mooring/runtime';
import { testCluster, testNamespace } from '@mooring/test/harness';
import { parseAllDocuments } from 'yaml';
import { importFlux } from '../src/flux-import.ts';
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
`;

test('import-flux rewrites groups, labels and annotations, keeps comments and warns of fields Mooring lacks', async (t) => {
  const ns = await testNamespace(t, 'cli-import');
  const { client } = await testCluster();
  const dir = await mkdtemp(join(tmpdir(), 'mooring-cli-flux-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, 'flux.yaml'), FLUX);
  const r = await mooring(['import-flux', dir]);
  assert.equal(r.code, 0, r.stderr);
  assert.ok(!r.stdout.includes('fluxcd.io/'));
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
  assert.match(
    r.stderr,
    /^⚠ [^\n]*: GitRepository app: spec\.gitImplementation is not supported by Mooring[^\n]*\n$/,
  );
  // The converted Kustomization is one the API server takes.
  await client.apply(
    { ...docs[1]!, metadata: { ...docs[1]!.metadata, namespace: ns } },
    { fieldManager: 't', dryRun: true },
  );
  const strict = await mooring(['import-flux', '--strict', join(dir, 'flux.yaml')]);
  assert.equal(strict.code, 1);
});

// SOURCE: the fixture under testdata/ is modelled on fluxcd/flux2-kustomize-helm-example (its
// shape with Flux 2.7: ExternalArtifacts cut by an ArtifactGenerator, Helm for the apps).
const EXAMPLE = fileURLToPath(new URL('./testdata/flux2-kustomize-helm-example', import.meta.url));

test('import-flux on flux2-kustomize-helm-example: one line per object it cannot convert, exit 1, no API version made up', async (t) => {
  const ns = await testNamespace(t, 'cli-import-example');
  const { client } = await testCluster();
  const r = await mooring(['import-flux', EXAMPLE]);
  assert.equal(r.code, 1, r.stderr);
  const lines = r.stderr.trimEnd().split('\n');
  const about = (object: string): string[] => lines.filter((l) => l.includes(`: ${object}: `));
  // The three Kustomizations reading ExternalArtifacts, said once each, with what to do.
  for (const name of ['infra-controllers', 'infra-configs', 'apps']) {
    const said = about(`Kustomization flux-system/${name}`);
    assert.equal(said.length, 1, `${name}: ${r.stderr}`);
    assert.match(
      said[0]!,
      /^✗ .*spec\.sourceRef\.kind ExternalArtifact is not a source Mooring has \(it takes GitRepository or OCIRepository\)/,
    );
  }
  // Kinds Mooring does not have: kept as they are, one line each.
  for (const object of ['ArtifactGenerator flux-system/flux-system']) {
    const said = about(object);
    assert.equal(said.length, 1, `${object}: ${r.stderr}`);
    assert.match(said[0]!, /^✗ .* has no Mooring equivalent: kept as it is/);
  }
  // HelmRepositories and HelmReleases are Mooring's too (source.mooring.dev, helm.mooring.dev/v2),
  // converted without a word.
  for (const object of [
    'HelmRepository podinfo/podinfo',
    'HelmRepository ingress-nginx/ingress-nginx',
    'HelmRelease podinfo/podinfo',
    'HelmRelease ingress-nginx/ingress-nginx',
  ])
    assert.equal(about(object).length, 0, `${object}: ${r.stderr}`);
  assert.equal(about('GitRepository flux-system/flux-system').length, 0, r.stderr);
  assert.equal(about('Kustomization flux-system/flux-system').length, 0, r.stderr);
  assert.match(
    r.stderr,
    /^⚠ .*kustomization\.yaml: kustomize configuration: not an object to apply: left out/m,
  );
  assert.match(
    lines.at(-1)!,
    /^✗ 4 objects could not be converted, so a cluster with only Mooring would refuse the output/,
  );

  const docs = parseAllDocuments(r.stdout).map((d) => d.toJS() as KubeObject);
  assert.equal(docs.length, 12);
  assert.ok(!docs.some((d) => d.kind === 'Kustomization' && d.apiVersion.startsWith('kustomize.config')));
  // Every Mooring API version names a kind Mooring serves; the rest stay Flux's.
  for (const doc of docs) {
    if (/\.mooring\.dev\/v\d+$/.test(doc.apiVersion))
      assert.ok(
        KINDS.some((k) => `${k.group}/${k.version}` === doc.apiVersion && k.kind === doc.kind),
        `${doc.apiVersion} ${doc.kind} does not exist`,
      );
  }
  const byName = (kind: string, name: string): KubeObject =>
    docs.find((d) => d.kind === kind && d.metadata.name === name)!;
  assert.equal(byName('HelmRepository', 'podinfo').apiVersion, 'source.mooring.dev/v1');
  assert.equal(byName('HelmRelease', 'podinfo').apiVersion, 'helm.mooring.dev/v2');
  assert.equal(byName('ArtifactGenerator', 'flux-system').apiVersion, 'source.extensions.fluxcd.io/v1beta1');
  assert.equal(byName('GitRepository', 'flux-system').apiVersion, 'source.mooring.dev/v1');
  assert.deepEqual(byName('Namespace', 'ingress-nginx').metadata.labels, {
    'mooring.dev/tenant': 'sre-team',
  });

  // What the CLI says would be refused is what this API server (Mooring's CRDs only) refuses.
  const noted = new Set(
    lines
      .filter((l) => l.startsWith('✗ '))
      .map((l) => l.split(': ')[1])
      .filter((o): o is string => !!o),
  );
  for (const doc of docs) {
    const object = `${doc.kind} ${doc.metadata.namespace ? `${doc.metadata.namespace}/` : ''}${doc.metadata.name}`;
    const namespaced = doc.metadata.namespace
      ? { ...doc, metadata: { ...doc.metadata, namespace: ns } }
      : doc;
    const refused = await client.apply(namespaced, { fieldManager: 'mooring-cli-test', dryRun: true }).then(
      () => false,
      () => true,
    );
    assert.equal(refused, noted.has(object), `${object}: refused ${refused}, noted ${noted.has(object)}`);
  }
});

test('import-flux leaves kustomize configurations out, with or without their apiVersion', () => {
  for (const text of [
    'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [a.yaml]\n',
    'kind: Kustomization\nresources: [a.yaml]\n',
    'resources: [a.yaml]\n',
  ]) {
    const { yaml, notes } = importFlux(text);
    assert.equal(yaml, '', text);
    assert.deepEqual(
      notes.map((n) => n.severity),
      ['warning'],
    );
  }
});
