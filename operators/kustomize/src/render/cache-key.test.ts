import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RenderInputs } from './artifact-source.ts';
import { canonicalJSON, renderKey, renderKeyMaterial } from './cache-key.ts';

/** Every field present, down to the leaves: a field added to RenderInputs fails to compile here until filled. */
type Full<T> = T extends readonly (infer U)[]
  ? Full<U>[]
  : T extends object
    ? { [K in keyof T]-?: Full<NonNullable<T[K]>> }
    : T;

const AGE_KEY = 'AGE-SECRET-KEY-1QQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQ';
const PASSWORD = 'hunter2';

const full = (): Full<RenderInputs> => ({
  artifact: {
    path: 'gitrepository/ns/repo/abc.tar.gz',
    url: 'http://source/gitrepository/ns/repo/abc.tar.gz',
    revision: 'main@sha1:0123456789abcdef0123456789abcdef01234567',
    digest: 'sha256:abc',
    lastUpdateTime: '2025-01-01T00:00:00Z',
    size: 1234,
    metadata: { 'org.opencontainers.image.source': 'https://git.example/repo' },
  },
  path: './deploy',
  overrides: {
    targetNamespace: 'apps',
    namePrefix: 'p-',
    nameSuffix: '-s',
    patches: [
      {
        patch: '- op: add\n  path: /metadata/labels/x\n  value: y',
        target: {
          group: 'apps',
          version: 'v1',
          kind: 'Deployment',
          name: 'web',
          namespace: 'apps',
          labelSelector: 'app=web',
          annotationSelector: 'a=b',
        },
      },
    ],
    images: [
      { name: 'nginx', newName: 'mirror/nginx', newTag: '1.27', digest: 'sha256:def', tagSuffix: '-alpine' },
    ],
    components: ['../components/a'],
    ignoreMissingComponents: true,
    buildMetadata: ['originAnnotations'],
    commonMetadata: { labels: { team: 'ml' }, annotations: { owner: 'ml' } },
  },
  decryption: { ageIdentities: [AGE_KEY] },
  substitute: { vars: { password: PASSWORD }, options: { strict: true, strategy: 'WithVariables' } },
  owner: { name: 'apps', namespace: 'flux-system' },
  reader: '{"impersonate":{"user":"system:serviceaccount:flux-system:deployer"}}',
});

type Path = (string | number)[];

/** Every path to a field, element or leaf of `value`; fails on an empty list or map, which would cover nothing. */
function paths(value: unknown, at: Path = []): Path[] {
  if (value === null || typeof value !== 'object') return [at];
  const entries = Array.isArray(value) ? value.map((v, i) => [i, v] as const) : Object.entries(value);
  assert.ok(entries.length > 0, `${at.join('.')} is empty in the filled inputs: give it an entry`);
  return [at, ...entries.flatMap(([k, v]) => paths(v, [...at, k]))];
}

function changedAt(inputs: unknown, path: Path, how: 'change' | 'remove'): unknown {
  const copy = structuredClone(inputs) as Record<string | number, unknown>;
  let parent = copy;
  for (const k of path.slice(0, -1)) parent = parent[k] as Record<string | number, unknown>;
  const last = path[path.length - 1]!;
  const old = parent[last];
  if (how === 'remove') {
    if (Array.isArray(parent)) parent.splice(last as number, 1);
    else delete parent[last];
  } else if (typeof old === 'string') parent[last] = `${old}-changed`;
  else if (typeof old === 'number') parent[last] = old + 1;
  else if (typeof old === 'boolean') parent[last] = !old;
  else throw new Error(`no change defined for ${typeof old} at ${path.join('.')}`);
  return copy;
}

test('a change to any field of the render inputs, or its removal, changes the cache key', () => {
  const inputs = full();
  const key = renderKey(inputs);
  const all = paths(inputs).filter((p) => p.length > 0);
  // The walk reaches every top-level field, so a new one is covered without editing this test.
  assert.deepEqual(new Set(all.filter((p) => p.length === 1).map(String)), new Set(Object.keys(inputs)));
  for (const path of all) {
    const value = getAt(inputs, path);
    if (value === null || typeof value !== 'object')
      assert.notEqual(
        renderKey(changedAt(inputs, path, 'change') as object),
        key,
        `changing ${path.join('.')}`,
      );
    assert.notEqual(
      renderKey(changedAt(inputs, path, 'remove') as object),
      key,
      `removing ${path.join('.')}`,
    );
  }
});

function getAt(value: unknown, path: Path): unknown {
  let v = value as Record<string | number, unknown>;
  for (const k of path) v = v[k] as Record<string | number, unknown>;
  return v;
}

test('the key does not depend on the order fields were written in, nor on fields left undefined', () => {
  const inputs = full();
  const reversed = (v: unknown): unknown =>
    v === null || typeof v !== 'object'
      ? v
      : Array.isArray(v)
        ? v.map(reversed)
        : Object.fromEntries(
            Object.entries(v)
              .reverse()
              .map(([k, x]) => [k, reversed(x)]),
          );
  assert.equal(renderKey(reversed(inputs) as object), renderKey(inputs));
  const { decryption: _d, ...rest } = inputs;
  assert.equal(renderKey({ ...rest, decryption: undefined }), renderKey(rest));
  assert.equal(canonicalJSON({ b: 1, a: [{ d: 2, c: 3 }] }), '{"a":[{"c":3,"d":2}],"b":1}');
});

test('secrets are in the key only as keyed hashes: key material is safe to log', () => {
  const inputs = full();
  const material = renderKeyMaterial(inputs);
  assert.ok(!material.includes(AGE_KEY), 'the age identity is in the key material');
  assert.ok(!material.includes(PASSWORD), 'a postBuild value is in the key material');
  assert.match(material, /"decryption":"hmac-sha256:[0-9a-f]{64}"/);
  assert.match(material, /"vars":"hmac-sha256:[0-9a-f]{64}"/);
  // What is not secret stays readable, and the inputs themselves are untouched.
  assert.match(material, /"strategy":"WithVariables"/);
  assert.deepEqual(inputs, full());
});
