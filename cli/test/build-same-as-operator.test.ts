// `mooring build kustomization` against the operator itself: the same files, once committed to Git
// and reconciled by the real kustomize operator, once in a local folder rendered by the CLI; what
// the operator's render produced and what the CLI prints must be the same objects, byte for byte.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { KUSTOMIZE_API_VERSION, SOURCE_API_VERSION } from '@mooring/api';
import { RenderCache, type Rendered, type RenderInputs } from '@mooring/kustomize-operator/render';
import type { KubeObject } from '@mooring/runtime';
import { GitServer, testCluster, testNamespace, waitForReady } from '@mooring/test/harness';
import { parseAllDocuments } from 'yaml';
import { objectsToYAML } from '../src/render-local.ts';
import { startGitOpsOperators } from './gitops-operators.ts';
import { mooring } from './run-cli.ts';

const SOPS = new URL('../../operators/kustomize/testdata/sops/', import.meta.url);
const sops = (name: string) => readFile(new URL(name, SOPS), 'utf8');

test('build kustomization prints exactly what the operator renders: substitution, SOPS and owner labels', async (t) => {
  const ns = await testNamespace(t, 'cli-same-render');
  const { client, kubeconfig } = await testCluster();
  const files: Record<string, string> = {
    'deploy/kustomization.yaml': [
      'resources: [app.yaml, db.enc.yaml]',
      'secretGenerator:',
      '  - name: app-env',
      '    envs: [app.enc.env]',
      '',
    ].join('\n'),
    'deploy/app.yaml': [
      'apiVersion: v1',
      'kind: ConfigMap',
      'metadata:',
      '  name: app',
      'data:',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: postBuild variables, not JavaScript
      '  greeting: ${greeting}',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: postBuild variables, not JavaScript
      '  size: "${replicas}x"',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: postBuild variables, not JavaScript
      '  region: ${region:=eu}',
      '',
    ].join('\n'),
    'deploy/db.enc.yaml': await sops('secret-stringdata.enc.yaml'),
    'deploy/app.enc.env': await sops('app.enc.env'),
  };

  // What the operator's render cache hands the reconciler, for this namespace's Kustomization.
  const renders: { inputs: RenderInputs; rendered: Rendered }[] = [];
  const get = RenderCache.prototype.get;
  RenderCache.prototype.get = async function (this: RenderCache, inputs, signal) {
    const rendered = await get.call(this, inputs, signal);
    if (inputs.owner.namespace === ns) renders.push({ inputs, rendered: structuredClone(rendered) });
    return rendered;
  };
  t.after(() => {
    RenderCache.prototype.get = get;
  });

  const git = await GitServer.start();
  t.after(() => git.close());
  const repo = await git.createRepo('apps');
  await repo.commit(files);
  await client.create({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'sops-age', namespace: ns },
    stringData: { 'age.agekey': await sops('age.agekey') },
  });
  await client.create({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'vars', namespace: ns },
    data: { greeting: 'hello', replicas: '1' },
  });
  await client.create({
    apiVersion: SOURCE_API_VERSION,
    kind: 'GitRepository',
    metadata: { name: 'apps', namespace: ns },
    spec: { url: repo.url, interval: '10m', ref: { branch: 'main' } },
  } as KubeObject);
  await client.create({
    apiVersion: KUSTOMIZE_API_VERSION,
    kind: 'Kustomization',
    metadata: { name: 'apps', namespace: ns },
    spec: {
      sourceRef: { kind: 'GitRepository', name: 'apps' },
      path: './deploy',
      interval: '10m',
      prune: true,
      targetNamespace: ns,
      namePrefix: 'p-',
      commonMetadata: { labels: { team: 'ml' } },
      decryption: { provider: 'sops', secretRef: { name: 'sops-age' } },
      // The inline value wins over the ConfigMap's, as in Flux.
      postBuild: { substitute: { replicas: '2' }, substituteFrom: [{ kind: 'ConfigMap', name: 'vars' }] },
    },
  } as KubeObject);
  await startGitOpsOperators(t, ns);
  await waitForReady(
    { apiVersion: KUSTOMIZE_API_VERSION, kind: 'Kustomization', namespace: ns, name: 'apps' },
    'True',
    () => true,
    60_000,
  );
  const fromOperator = renders.at(-1)?.rendered;
  assert.ok(fromOperator, 'the operator rendered nothing');

  const dir = await mkdtemp(join(tmpdir(), 'mooring-cli-same-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  for (const [name, text] of Object.entries(files)) {
    await mkdir(dirname(join(dir, name)), { recursive: true });
    await writeFile(join(dir, name), text);
  }
  const built = await mooring(['build', 'kustomization', 'apps', '--path', join(dir, 'deploy'), '-n', ns], {
    env: { KUBECONFIG: kubeconfig },
  });
  assert.equal(built.code, 0, built.stderr);
  assert.equal(built.stdout, objectsToYAML(fromOperator.manifests as KubeObject[]));
  const printed = parseAllDocuments(built.stdout).map((d) => d.toJS() as KubeObject);
  assert.deepEqual(printed, fromOperator.manifests);

  // Not vacuous: substituted, decrypted (a manifest and a generator's dotenv), labelled.
  const named = (prefix: string) => printed.find((o) => o.metadata.name?.startsWith(prefix))!;
  assert.deepEqual(named('p-app').data, { greeting: 'hello', size: '2x', region: 'eu' });
  assert.equal((named('p-db-credentials').stringData as Record<string, string>).password, 's3cr3t-Pa55word');
  const env = named('p-app-env').data as Record<string, string>;
  assert.equal(Buffer.from(env.DB_USER!, 'base64').toString(), 'admin');
  for (const obj of printed) {
    assert.equal(obj.metadata.namespace, ns);
    assert.equal(obj.metadata.labels?.team, 'ml');
    assert.equal(obj.metadata.labels?.['kustomize.mooring.dev/name'], 'apps');
    assert.equal(obj.metadata.labels?.['kustomize.mooring.dev/namespace'], ns);
  }
});

test('build kustomization fails where the operator would, with the message the operator gives or the step to take', async (t) => {
  const ns = await testNamespace(t, 'cli-render-fails');
  const { client, kubeconfig } = await testCluster();
  const dir = await mkdtemp(join(tmpdir(), 'mooring-cli-fails-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await mkdir(join(dir, 'sops'));
  await writeFile(join(dir, 'sops/db.enc.yaml'), await sops('secret-stringdata.enc.yaml'));
  await mkdir(join(dir, 'broken'));
  await writeFile(join(dir, 'broken/kustomization.yaml'), 'resources: [missing.yaml]\n');
  const cases: [string, Record<string, unknown>, string, RegExp][] = [
    [
      'plain',
      {},
      'sops',
      /^✗ Secret\/db-credentials is SOPS-encrypted but spec.decryption is not set: refusing/,
    ],
    [
      'no-key',
      { decryption: { provider: 'sops', secretRef: { name: 'nope' } } },
      'sops',
      new RegExp(`^✗ decryption.secretRef names Secret ${ns}/nope, which does not exist: create it`),
    ],
    [
      'sa',
      { decryption: { provider: 'sops', serviceAccountName: 'kms' } },
      'sops',
      /^✗ decryption.serviceAccountName is not supported yet; use secretRef/,
    ],
    [
      'no-vars',
      { postBuild: { substituteFrom: [{ kind: 'ConfigMap', name: 'none' }] } },
      'broken',
      new RegExp(
        `^✗ postBuild.substituteFrom names ConfigMap ${ns}/none, which does not exist: create it or mark`,
      ),
    ],
    ['broken', {}, 'broken', /^✗ kustomize build of .*broken failed: /],
  ];
  for (const [name, spec] of cases) {
    await client.create({
      apiVersion: KUSTOMIZE_API_VERSION,
      kind: 'Kustomization',
      metadata: { name, namespace: ns },
      spec: { sourceRef: { kind: 'GitRepository', name: 'x' }, interval: '10m', prune: true, ...spec },
    } as KubeObject);
  }
  const results = await Promise.all(
    cases.map(([name, , folder]) =>
      mooring(['build', 'ks', name, '--path', join(dir, folder), '-n', ns], {
        env: { KUBECONFIG: kubeconfig },
      }),
    ),
  );
  for (const [i, r] of results.entries()) {
    assert.equal(r.code, 1, `${cases[i]![0]}: ${r.stderr}`);
    assert.match(r.stderr, cases[i]![3], cases[i]![0]);
    assert.equal(r.stdout, '');
  }
});
