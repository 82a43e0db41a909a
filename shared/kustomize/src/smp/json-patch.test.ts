import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { KustomizeError } from '../errors.ts';
import type { JsonValue } from '../resource.ts';
import { applyJson6902 } from './json-patch.ts';

const doc = (): JsonValue => ({
  metadata: { name: 'web', labels: { 'app.kubernetes.io/name': 'web', 'a~b': 'x' } },
  spec: { replicas: 1, containers: [{ name: 'a' }, { name: 'b' }] },
});

const cases: { name: string; ops: JsonValue; expected: JsonValue }[] = [
  {
    name: 'add sets a new field',
    ops: [{ op: 'add', path: '/spec/paused', value: true }],
    expected: {
      metadata: (doc() as { metadata: JsonValue }).metadata,
      spec: { replicas: 1, containers: [{ name: 'a' }, { name: 'b' }], paused: true },
    },
  },
  {
    name: 'add inserts before an index and - appends',
    ops: [
      { op: 'add', path: '/spec/containers/1', value: { name: 'mid' } },
      { op: 'add', path: '/spec/containers/-', value: { name: 'end' } },
    ],
    expected: {
      metadata: (doc() as { metadata: JsonValue }).metadata,
      spec: { replicas: 1, containers: [{ name: 'a' }, { name: 'mid' }, { name: 'b' }, { name: 'end' }] },
    },
  },
  {
    name: 'replace and remove honour ~1 and ~0 escapes',
    ops: [
      { op: 'replace', path: '/metadata/labels/app.kubernetes.io~1name', value: 'api' },
      { op: 'remove', path: '/metadata/labels/a~0b' },
    ],
    expected: {
      metadata: { name: 'web', labels: { 'app.kubernetes.io/name': 'api' } },
      spec: { replicas: 1, containers: [{ name: 'a' }, { name: 'b' }] },
    },
  },
  {
    name: 'move and copy',
    ops: [
      { op: 'copy', from: '/spec/containers/0', path: '/spec/containers/-' },
      { op: 'move', from: '/spec/replicas', path: '/metadata/replicas' },
    ],
    expected: {
      metadata: { name: 'web', labels: { 'app.kubernetes.io/name': 'web', 'a~b': 'x' }, replicas: 1 },
      spec: { containers: [{ name: 'a' }, { name: 'b' }, { name: 'a' }] },
    },
  },
  {
    name: 'a passing test lets the next operations run',
    ops: [
      { op: 'test', path: '/spec/containers/1', value: { name: 'b' } },
      { op: 'remove', path: '/spec/containers/1' },
    ],
    expected: {
      metadata: (doc() as { metadata: JsonValue }).metadata,
      spec: { replicas: 1, containers: [{ name: 'a' }] },
    },
  },
  {
    name: 'like kustomize: negative indices count from the end and replace adds a missing key',
    ops: [
      { op: 'remove', path: '/spec/containers/-1' },
      { op: 'replace', path: '/spec/paused', value: false },
    ],
    expected: {
      metadata: (doc() as { metadata: JsonValue }).metadata,
      spec: { replicas: 1, containers: [{ name: 'a' }], paused: false },
    },
  },
  {
    name: 'replacing the root swaps the document',
    ops: [{ op: 'replace', path: '', value: { kind: 'Other' } }],
    expected: { kind: 'Other' },
  },
];

describe('applyJson6902', () => {
  for (const c of cases) {
    test(c.name, () => {
      const input = doc();
      assert.deepEqual(applyJson6902(input, c.ops), c.expected);
      assert.deepEqual(input, doc(), 'the input document must not change');
    });
  }

  const failures: { name: string; ops: JsonValue; message: RegExp }[] = [
    {
      name: 'a failing test stops the patch',
      ops: [
        { op: 'add', path: '/x', value: 1 },
        { op: 'test', path: '/spec/replicas', value: 2 },
      ],
      message: /operation 1 \(test \/spec\/replicas\) failed: the value differs/,
    },
    {
      name: 'remove of a missing field',
      ops: [{ op: 'remove', path: '/spec/nope' }],
      message: /operation 0 \(remove \/spec\/nope\) failed: 'nope' does not exist/,
    },
    {
      name: 'replace of a missing list index',
      ops: [{ op: 'replace', path: '/spec/containers/2', value: {} }],
      message: /operation 0 \(replace \/spec\/containers\/2\) failed: index 2 is out of range/,
    },
    {
      name: 'add under a missing parent',
      ops: [{ op: 'add', path: '/status/phase', value: 'x' }],
      message: /operation 0 \(add \/status\/phase\) failed: 'status' does not exist/,
    },
    {
      name: 'an index past the end',
      ops: [{ op: 'add', path: '/spec/containers/5', value: {} }],
      message: /index 5 is out of range/,
    },
    {
      name: 'a negative index before the start',
      ops: [{ op: 'remove', path: '/spec/containers/-3' }],
      message: /index -3 is out of range/,
    },
    {
      name: 'an index that is not a number',
      ops: [{ op: 'remove', path: '/spec/containers/first' }],
      message: /'first' is not an array index/,
    },
    {
      name: 'moving a value into its own child',
      ops: [{ op: 'move', from: '/spec', path: '/spec/inner' }],
      message: /cannot move '\/spec' into itself/,
    },
    { name: 'an unknown op', ops: [{ op: 'merge', path: '/spec' }], message: /unknown op 'merge'/ },
    { name: 'a missing value', ops: [{ op: 'add', path: '/x' }], message: /'value' is missing/ },
    {
      name: 'a pointer without a leading slash',
      ops: [{ op: 'add', path: 'x', value: 1 }],
      message: /must start with '\/'/,
    },
    { name: 'operations that are not a list', ops: { op: 'add' }, message: /must be a list of operations/ },
  ];
  for (const f of failures) {
    test(`error: ${f.name}`, () => {
      assert.throws(
        () => applyJson6902(doc(), f.ops),
        (error: unknown) => error instanceof KustomizeError && f.message.test(error.message),
      );
    });
  }

  test('a __proto__ key is stored as a plain field', () => {
    const result = applyJson6902({}, [
      { op: 'add', path: '/__proto__', value: { polluted: true } },
    ]) as Record<string, unknown>;
    assert.equal(Object.getPrototypeOf(result), Object.prototype);
    assert.deepEqual(Object.keys(result), ['__proto__']);
  });
});
