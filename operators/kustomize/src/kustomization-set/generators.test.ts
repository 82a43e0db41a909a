// Generators over a table of cluster Secrets (no API server) and a real folder standing in for an
// extracted artifact (the ArtifactCache's output in the operator).
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { globToRegExp } from './artifact-generators.ts';
import { type ClusterSecret, type GeneratorInputs, generateAll } from './generators.ts';

const clusters: ClusterSecret[] = [
  { name: 'c-eu', labels: { 'mooring.dev/cluster': 'eu1', env: 'prod' }, annotations: {}, deleting: false },
  {
    name: 'c-us',
    labels: { 'mooring.dev/cluster': '', env: 'staging' },
    annotations: { a: 'b' },
    deleting: false,
  },
  { name: 'c-gone', labels: { 'mooring.dev/cluster': 'gone', env: 'prod' }, annotations: {}, deleting: true },
];

let dir: string;
let inputs: GeneratorInputs;
const ref = { kind: 'GitRepository' as const, name: 'fleet' };

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kss-gen-'));
  for (const d of ['apps/web', 'apps/db', 'apps/db/nested', 'infra/x'])
    await mkdir(join(dir, d), { recursive: true });
  await writeFile(join(dir, 'apps/web/config.yaml'), 'team: web\nreplicas: 2\n');
  await writeFile(join(dir, 'apps/db/config.json'), '[{"team": "db1"}, {"team": "db2"}]');
  inputs = { listClusters: async () => clusters, readArtifact: async () => ({ dir }) };
});
after(() => rm(dir, { recursive: true, force: true }));

describe('KustomizationSet generators', () => {
  test('clusters: Secrets matching the selector, not those being deleted; the name falls back to the Secret', async () => {
    const all = await generateAll([{ clusters: {} }], inputs);
    assert.deepEqual(
      all.map((e) => (e.params.cluster as { name: string }).name),
      ['eu1', 'c-us'],
    );
    const prod = await generateAll([{ clusters: { selector: { matchLabels: { env: 'prod' } } } }], inputs);
    assert.deepEqual(
      prod.map((e) => e.clusterSecret),
      ['c-eu'],
    );
  });

  test('matrix pairs every cluster with every list element; merge overlays by key', async () => {
    const m = await generateAll(
      [{ matrix: { generators: [{ clusters: {} }, { list: { elements: [{ app: 'a' }, { app: 'b' }] } }] } }],
      inputs,
    );
    assert.equal(m.length, 4);
    assert.equal(m[1]!.params.app, 'b');
    assert.equal(m[1]!.clusterSecret, 'c-eu');
    const merged = await generateAll(
      [
        {
          merge: {
            mergeKeys: ['cluster.secretName'],
            generators: [
              { clusters: {} },
              { list: { elements: [{ cluster: { secretName: 'c-us' }, tier: 'gold' }] } },
            ],
          },
        },
      ],
      inputs,
    );
    assert.deepEqual(
      merged.map((e) => e.params.tier),
      [undefined, 'gold'],
    );
    assert.equal(
      (merged[1]!.params.cluster as { name: string }).name,
      'c-us',
      'the overlay keeps the base keys',
    );
  });

  test('directories: one element per matching folder, exclusions applied', async () => {
    const d = await generateAll(
      [{ directories: { sourceRef: ref, paths: ['apps/*'], exclude: ['apps/db'] } }],
      inputs,
    );
    assert.deepEqual(
      d.map((e) => e.params.directory),
      [{ path: 'apps/web', name: 'web' }],
    );
    const deep = await generateAll([{ directories: { sourceRef: ref, paths: ['apps/**'] } }], inputs);
    assert.equal(deep.length, 3);
  });

  test('files: a map is one element, a list one per item', async () => {
    const f = await generateAll([{ files: { sourceRef: ref, paths: ['apps/**/config.*'] } }], inputs);
    assert.deepEqual(
      f.map((e) => e.params.team),
      ['db1', 'db2', 'web'],
    );
    assert.deepEqual(f[2]!.params.file, { path: 'apps/web/config.yaml', name: 'config.yaml' });
  });

  test('a generator naming two kinds, or a bad selector operator, is an error naming the generator', async () => {
    await assert.rejects(
      generateAll([{ list: { elements: [] } }, { list: { elements: [] }, clusters: {} }], inputs),
      /generator 2: a generator names exactly one kind/,
    );
    await assert.rejects(
      generateAll(
        [{ clusters: { selector: { matchExpressions: [{ key: 'env', operator: 'Near' }] } } }],
        inputs,
      ),
      /generator 1: selector operator Near/,
    );
  });

  test('globs', () => {
    assert.ok(globToRegExp('apps/*').test('apps/web'));
    assert.ok(!globToRegExp('apps/*').test('apps/web/x'));
    assert.ok(globToRegExp('**/config.yaml').test('config.yaml'));
    assert.ok(globToRegExp('./apps/?b').test('apps/db'));
  });
});
