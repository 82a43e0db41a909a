import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual, promisify } from 'node:util';
import { parseAllDocuments, stringify } from 'yaml';
import type { JsonObject, JsonValue } from '../resource.ts';
import { schemaFor } from './schema.ts';
import { strategicMerge } from './strategic-merge.ts';

// Differential test: seeded random Deployments and strategic merge patches, applied by the Go
// `kustomize build` (bin/kustomize, built by hack/) and by strategicMerge, must come out equal.
// Cases where kustomize leaves directive keys in its output are skipped: Mooring removes those on purpose.

const kustomize = fileURLToPath(new URL('../../../../bin/kustomize', import.meta.url));

function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
}

function generator(seed: number) {
  const rnd = random(seed);
  const pick = <T>(items: T[]): T => items[Math.floor(rnd() * items.length)]!;
  const maybe = (p: number) => rnd() < p;
  const times = (max: number, make: () => JsonObject) =>
    Array.from({ length: Math.floor(rnd() * max) }, make);

  const env = (patch: boolean): JsonObject => {
    const e: JsonObject = { name: pick(['X', 'Y', 'Z', 'W']) };
    if (maybe(0.7)) e.value = pick(['1', '2', '3']);
    if (patch && maybe(0.15)) e.$patch = 'delete';
    if (patch && maybe(0.1)) e.value = null;
    return e;
  };
  const port = (): JsonObject => {
    const p: JsonObject = { containerPort: pick([80, 81, 443]) };
    if (maybe(0.4)) p.protocol = pick(['TCP', 'UDP']);
    if (maybe(0.3)) p.name = pick(['http', 'x']);
    return p;
  };
  const container = (patch: boolean): JsonObject => {
    const c: JsonObject = { name: pick(['a', 'b', 'c', 'd']) };
    if (maybe(0.7)) c.image = pick(['img:1', 'img:2']);
    if (maybe(0.5)) c.env = times(4, () => env(patch));
    if (maybe(0.3)) c.ports = times(3, port);
    if (maybe(0.3)) c.volumeMounts = [{ mountPath: pick(['/a', '/b']), name: pick(['v1', 'v2']) }];
    if (maybe(0.2)) c.args = [pick(['x', 'y'])];
    if (patch && maybe(0.1)) c.$patch = pick(['delete', 'replace']);
    return c;
  };
  const podSpec = (patch: boolean): JsonObject => {
    const s: JsonObject = {};
    if (maybe(0.85)) {
      const containers: JsonValue[] = times(3, () => container(patch));
      if (patch && maybe(0.08)) containers.unshift({ $patch: pick(['replace', 'delete']) });
      s.containers = containers;
    }
    if (maybe(0.3)) s.initContainers = [container(patch)];
    if (maybe(0.4)) {
      s.volumes = times(3, () => ({ name: pick(['v1', 'v2', 'v3']), emptyDir: {} }));
    }
    if (maybe(0.3)) s.tolerations = [{ key: pick(['k1', 'k2']) }];
    if (maybe(0.2)) s.nodeSelector = patch && maybe(0.3) ? null : { zone: pick(['a', 'b']) };
    return s;
  };
  return (name: string, patch: boolean): JsonObject => {
    const metadata: JsonObject = { name };
    if (maybe(0.3)) metadata.labels = { a: patch && maybe(0.3) ? null : pick(['1', '2']) };
    if (maybe(0.2)) metadata.finalizers = [...new Set([pick(['f1', 'f2']), pick(['f3', 'f1'])])];
    const spec: JsonObject = {};
    if (maybe(0.3)) spec.replicas = pick([1, 2]);
    if (maybe(0.9)) spec.template = { spec: podSpec(patch) };
    return { apiVersion: 'apps/v1', kind: 'Deployment', metadata, spec };
  };
}

test('strategicMerge agrees with kustomize build on 120 random Deployment patches', {
  skip: existsSync(kustomize)
    ? false
    : `skipped: ${kustomize} is absent (the conformance hack/ script builds it)`,
}, async () => {
  const make = generator(20261129);
  const cases = Array.from({ length: 120 }, (_, i) => ({
    original: make(`d${i}`, false),
    patch: make(`d${i}`, true),
  }));
  const dir = await mkdtemp(join(tmpdir(), 'mooring-smp-'));
  try {
    await writeFile(join(dir, 'resources.yaml'), cases.map((c) => stringify(c.original)).join('---\n'));
    await Promise.all(cases.map((c, i) => writeFile(join(dir, `patch-${i}.yaml`), stringify(c.patch))));
    const entries = cases.map((_, i) => `- path: patch-${i}.yaml\n`).join('');
    await writeFile(join(dir, 'kustomization.yaml'), `resources: [resources.yaml]\npatches:\n${entries}`);
    const { stdout } = await promisify(execFile)(kustomize, ['build', dir], { maxBuffer: 64 * 1024 * 1024 });
    const built = new Map<string, JsonObject>();
    for (const document of parseAllDocuments(stdout)) {
      const object = document.toJS() as JsonObject;
      built.set(String((object.metadata as JsonObject).name), object);
    }
    let compared = 0;
    for (const [i, c] of cases.entries()) {
      const expected = built.get(`d${i}`) ?? null;
      if (/"\$patch/.test(JSON.stringify(expected))) continue;
      const actual = strategicMerge(c.original, c.patch, schemaFor('apps/v1', 'Deployment'));
      assert.ok(
        isDeepStrictEqual(actual, expected),
        `case d${i} differs\noriginal: ${JSON.stringify(c.original)}\npatch: ${JSON.stringify(c.patch)}\n` +
          `mooring: ${JSON.stringify(actual)}\nkustomize: ${JSON.stringify(expected)}`,
      );
      compared++;
    }
    assert.ok(compared > 100, `only ${compared} of 120 cases were comparable`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
