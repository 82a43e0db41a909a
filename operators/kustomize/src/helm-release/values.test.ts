import assert from 'node:assert/strict';
import { test } from 'node:test';
import { composeValues, configDigest, mergeValues, setAtPath, ValuesError } from './values.ts';

// An in-memory stand-in for the ConfigMaps and Secrets valuesFrom reads (a unit test: no cluster).
const objects: Record<string, Record<string, string>> = {
  'ConfigMap/base': { 'values.yaml': 'image:\n  tag: v1\n  repo: r\nreplicas: 1\nlist: [a, b]\n' },
  'Secret/creds': { password: 's3cret', 'values.yaml': 'image:\n  tag: v2\n' },
  'ConfigMap/bad': { 'values.yaml': 'a: [unclosed\n' },
};
const read = async (kind: string, name: string) => objects[`${kind}/${name}`];

test("values merge in Flux's order: valuesFrom in order, targetPath as --set, then spec.values", async () => {
  const values = await composeValues(
    [
      { kind: 'ConfigMap', name: 'base' },
      { kind: 'Secret', name: 'creds' },
      { kind: 'Secret', name: 'creds', valuesKey: 'password', targetPath: 'auth.password' },
      { kind: 'ConfigMap', name: 'absent', optional: true },
    ],
    { replicas: 3, list: ['c'] },
    read,
  );
  assert.deepEqual(values, {
    image: { tag: 'v2', repo: 'r' },
    replicas: 3,
    list: ['c'],
    auth: { password: 's3cret' },
  });
});

test('a missing object or key fails naming it, never its content; optional ones are skipped', async () => {
  await assert.rejects(
    composeValues([{ kind: 'ConfigMap', name: 'absent' }], undefined, read),
    (e: unknown) => e instanceof ValuesError && e.message === "valuesFrom ConfigMap 'absent' not found",
  );
  await assert.rejects(
    composeValues([{ kind: 'Secret', name: 'creds', valuesKey: 'nope' }], undefined, read),
    /Secret 'creds' has no key 'nope'/,
  );
  await assert.rejects(composeValues([{ kind: 'ConfigMap', name: 'bad' }], undefined, read), (e: unknown) => {
    assert.ok(e instanceof ValuesError && !e.message.includes('unclosed'));
    return true;
  });
  assert.deepEqual(
    await composeValues(
      [{ kind: 'Secret', name: 'creds', valuesKey: 'nope', optional: true }],
      undefined,
      read,
    ),
    {},
  );
});

test('targetPath types scalars as --set does and allows escaped dots', () => {
  assert.deepEqual(setAtPath({}, 'a.b', 'true'), { a: { b: true } });
  assert.deepEqual(setAtPath({}, 'n', '42'), { n: 42 });
  assert.deepEqual(setAtPath({ a: 1 }, 'ann.example\\.com/x', 'v'), { a: 1, ann: { 'example.com/x': 'v' } });
  assert.throws(() => setAtPath({}, 'list[0]', 'x'), ValuesError);
});

test('the config digest does not depend on key order', () => {
  assert.equal(configDigest({ a: 1, b: { c: 2, d: 3 } }), configDigest({ b: { d: 3, c: 2 }, a: 1 }));
  assert.notEqual(configDigest({ a: 1 }), configDigest({ a: 2 }));
  assert.deepEqual(mergeValues({ a: { b: 1 } }, { a: null }), { a: null });
});
