import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatGoFloat, goYamlKeyLess, toYAMLDocument } from '../src/emit.ts';

// Expected text is what the Go kustomize v5.8.0 binary prints for the same values.
describe('toYAMLDocument', () => {
  const cases: [string, unknown, string][] = [
    ['YAML 1.1 booleans are quoted, keys too', { y: 'yes', on: 'off' }, '"on": "off"\n"y": "yes"\n'],
    [
      'octal-looking and date strings are quoted',
      { a: '0755', b: '2024-01-01', c: '1e3' },
      'a: "0755"\nb: "2024-01-01"\nc: "1e3"\n',
    ],
    ['plain strings stay plain', { a: "it's", b: 'x y' }, "a: it's\nb: x y\n"],
    [
      'indicators force single quotes',
      { a: '- x', b: 'a: b', c: '#c', d: '@x' },
      "a: '- x'\nb: 'a: b'\nc: '#c'\nd: '@x'\n",
    ],
    ['empty and null', { a: '', b: null, c: {}, d: [] }, 'a: ""\nb: null\nc: {}\nd: []\n'],
    [
      'tabs and astral characters are escaped',
      { a: 'a\tb', b: '\u{1F389}' },
      'a: "a\\tb"\nb: "\\U0001F389"\n',
    ],
    [
      'multi-line strings become literal blocks',
      { a: 'l1\nl2\n', b: 'x\ny', c: '\nlead', d: 't\n\n' },
      'a: |\n  l1\n  l2\nb: |-\n  x\n  y\nc: |2-\n\n  lead\nd: |+\n  t\n\n',
    ],
    [
      'sequences sit at the parent indent',
      { a: [{ b: 1, c: [1, 2] }, ['x']] },
      'a:\n- b: 1\n  c:\n  - 1\n  - 2\n- - x\n',
    ],
    [
      'floats print as Go does',
      { a: 1.5, b: 1234567.5, c: 0.00001, d: 3 },
      'a: 1.5\nb: 1.2345675e+06\nc: 1e-05\nd: 3\n',
    ],
    [
      'long plain strings fold after column 80',
      {
        long: 'this is a long string with spaces that should exceed the eighty column limit for folding in yaml v2 emitter',
      },
      'long: this is a long string with spaces that should exceed the eighty column limit\n  for folding in yaml v2 emitter\n',
    ],
  ];
  for (const [name, value, expected] of cases) {
    it(name, () => {
      assert.equal(toYAMLDocument(value as never), expected);
    });
  }

  it('folds plain strings at exactly the column go-yaml does', () => {
    const value: Record<string, string> = {};
    for (let n = 66; n < 84; n++) value[`k${n}`] = `${'word '.repeat(30).slice(0, n).trimEnd()}x`;
    // The data block of `kustomize build` on a ConfigMap with this data.
    const expected =
      'data:\n  k66: word word word word word word word word word word word word word wx\n  k67: word word word word word word word word word word word word word wox\n  k68: word word word word word word word word word word word word word worx\n  k69: word word word word word word word word word word word word word wordx\n  k70: word word word word word word word word word word word word word wordx\n  k71: word word word word word word word word word word word word word word wx\n  k72: word word word word word word word word word word word word word word wox\n  k73: word word word word word word word word word word word word word word worx\n  k74: word word word word word word word word word word word word word word wordx\n  k75: word word word word word word word word word word word word word word wordx\n  k76: word word word word word word word word word word word word word word word\n    wx\n  k77: word word word word word word word word word word word word word word word\n    wox\n  k78: word word word word word word word word word word word word word word word\n    worx\n  k79: word word word word word word word word word word word word word word word\n    wordx\n  k80: word word word word word word word word word word word word word word word\n    wordx\n  k81: word word word word word word word word word word word word word word word\n    word wx\n  k82: word word word word word word word word word word word word word word word\n    word wox\n  k83: word word word word word word word word word word word word word word word\n    word worx\n';
    assert.equal(toYAMLDocument({ data: value }), expected);
  });
});

describe('goYamlKeyLess', () => {
  it('orders keys like go-yaml v2: digits numerically, letters before others', () => {
    const keys = ['a10', 'b_', 'a9', '10', 'bB', 'A', '2', 'a09', 'a', '1'];
    keys.sort((x, y) => (goYamlKeyLess(x, y) ? -1 : goYamlKeyLess(y, x) ? 1 : 0));
    assert.deepEqual(keys, ['1', '2', '10', 'A', 'a', 'a9', 'a09', 'a10', 'b_', 'bB']);
  });
});

describe('formatGoFloat', () => {
  it('uses exponent form below 1e-4 and from 1e6', () => {
    assert.equal(formatGoFloat(0.0001), '0.0001');
    assert.equal(formatGoFloat(123456.5), '123456.5');
    assert.equal(formatGoFloat(Number.POSITIVE_INFINITY), '.inf');
  });
});
