import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compareUtf8, encodeHash, goJsonMarshal, hashResource } from '../src/hash.ts';

// Expected suffixes come from the Go kustomize v5.8.0 binary building the same generators.
describe('hashResource matches kustomize', () => {
  it('hashes a generated Secret', () => {
    const secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 's' },
      type: 'Opaque',
      data: { k: 'dg==' },
    };
    assert.equal(hashResource(secret), 'ftgtgc4t9f');
  });

  it('hashes a generated ConfigMap whose data needs HTML escaping and sorted keys', () => {
    const data = {
      yes: 'yes',
      a: 'b',
      colon: 'a: b',
      date: '2024-01-01',
      empty: '',
      html: '<a&b>',
      long: 'this is a long string with spaces that should exceed the eighty column limit for folding in yaml v2 emitter',
      oct: '0755',
      tab: 'a\tb',
    };
    assert.equal(
      hashResource({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' }, data }),
      'mt75879gk2',
    );
  });

  it('ignores the name, as kustomize looks up metadata/name as one field', () => {
    const a = hashResource({ kind: 'ConfigMap', metadata: { name: 'a' }, data: { k: 'v' } });
    const b = hashResource({ kind: 'ConfigMap', metadata: { name: 'b' }, data: { k: 'v' } });
    assert.equal(a, b);
    assert.notEqual(a, hashResource({ kind: 'ConfigMap', metadata: { name: 'a' }, data: { k: 'w' } }));
  });
});

describe('goJsonMarshal', () => {
  it('escapes like Go encoding/json and sorts keys by bytes', () => {
    assert.equal(
      goJsonMarshal({ b: '<&>', a: '\u2028\n\u0001', B: [1, 0.5, true, null] }),
      '{"B":[1,0.5,true,null],"a":"\\u2028\\n\\u0001","b":"\\u003c\\u0026\\u003e"}',
    );
  });
});

describe('encodeHash', () => {
  it('keeps 10 characters and swaps 0, 1, 3, a and e', () => {
    assert.equal(encodeHash('0123456789abcdef'), 'gh2k456789');
    assert.equal(encodeHash('aeaeaeaeaeff'), 'mtmtmtmtmt');
  });
});

describe('compareUtf8', () => {
  it('orders by UTF-8 bytes, which differs from UTF-16 order past U+FFFF', () => {
    const sorted = ['😀', '\uffff', 'b', 'a', 'ab', 'é', 'Z', ''].sort(compareUtf8);
    assert.deepEqual(sorted, ['', 'Z', 'a', 'ab', 'b', 'é', '\uffff', '😀']);
    assert.equal(compareUtf8('x😀', 'x\uffff'), 1);
    assert.equal(compareUtf8('same', 'same'), 0);
  });
});
