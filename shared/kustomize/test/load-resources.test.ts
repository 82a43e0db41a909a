import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { YamlSyntaxError } from '../src/errors.ts';
import { isRemote, parseResources, parseYamlDocuments, resolveGoNumber } from '../src/load-resources.ts';

describe('resolveGoNumber reads plain scalars as kyaml (yaml.v3) does', () => {
  const cases: [string, unknown][] = [
    ['0755', 493],
    ['0x1F', 31],
    ['0o17', 15],
    ['0b101', 5],
    ['1_000', 1000],
    ['08', 8],
    ['1e3', 1000],
    ['.5', 0.5],
    ['+12', 12],
    ['1:20', '1:20'],
    ['2024-01-01', '2024-01-01T00:00:00Z'],
    ['2024-13-01', '2024-13-01'],
    ['1.2.3', '1.2.3'],
  ];
  for (const [text, expected] of cases) {
    it(`${text} → ${JSON.stringify(expected)}`, () => {
      assert.equal(resolveGoNumber(text), expected);
    });
  }
});

describe('parseResources', () => {
  it('skips empty documents and appends List items after the other documents', () => {
    const text = [
      '---',
      'apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: from-list',
      '# only a comment',
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: plain',
      '',
    ].join('\n---\n');
    const names = parseResources(text, 'r.yaml').map((o) => (o.metadata as { name: string }).name);
    assert.deepEqual(names, ['plain', 'from-list']);
  });

  it('keeps top-level annotation values as their source text', () => {
    const [found] = parseResources(
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  annotations:\n    mode: 0755\n    empty:\n    flag: true\ndata:\n  n: 0755\n',
      'r.yaml',
    );
    assert.ok(found);
    const object = found;
    assert.deepEqual((object.metadata as { annotations: unknown }).annotations, {
      mode: '0755',
      empty: '',
      flag: 'true',
    });
    assert.equal((object.data as { n: unknown }).n, 493);
  });

  it('refuses a resource without kind or name, and non-string mapping keys', () => {
    assert.throws(() => parseResources('apiVersion: v1\nmetadata:\n  name: a\n', 'r.yaml'), /missing kind/);
    assert.throws(
      () => parseResources('apiVersion: v1\nkind: ConfigMap\n', 'r.yaml'),
      /missing metadata.name/,
    );
    assert.throws(
      () =>
        parseResources('apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  1: x\n', 'r.yaml'),
      /: r\.yaml: mapping key "1" at line 6, column 3 is not a string; quote it$/,
    );
  });
});

describe('YAML syntax errors', () => {
  /** The error parseYamlDocuments throws for text, which must be a YamlSyntaxError. */
  const syntaxError = (text: string, source = 'apps/base/deploy.yaml'): YamlSyntaxError => {
    try {
      parseYamlDocuments(text, source);
    } catch (error) {
      assert.ok(error instanceof YamlSyntaxError, `not a YamlSyntaxError: ${String(error)}`);
      return error;
    }
    assert.fail('parsed without an error');
  };

  it('name the whole path, the line and the column', () => {
    const error = syntaxError('apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n labels: {}\n');
    assert.equal(
      error.message,
      'apps/base/deploy.yaml: invalid YAML at line 5, column 1: All mapping items must start at the same column',
    );
    assert.deepEqual([error.file, error.line, error.column], ['apps/base/deploy.yaml', 5, 1]);
  });

  it('count the lines of the whole stream, not of the document that failed', () => {
    const error = syntaxError('a: 1\n---\nb: 2\n---\nc:\n  d: 1\n  e: [x\n', 'r.yaml');
    assert.equal(error.line, 8);
    assert.match(error.message, /^r\.yaml: invalid YAML at line 8, column 1: Flow sequence/);
  });

  it('give the column inside the line and count CRLF lines', () => {
    assert.equal(
      syntaxError('a: 1\r\nb: x: y\r\n', 'k.yaml').message,
      'k.yaml: invalid YAML at line 2, column 4: Nested mappings are not allowed in compact mappings',
    );
    const duplicate = syntaxError('kind: A\nmetadata:\n  name: a\n  name: b\n', 'k.yaml');
    assert.deepEqual([duplicate.line, duplicate.column], [4, 3]);
  });

  it('place an alias whose anchor is not defined', () => {
    assert.equal(
      syntaxError('a: 1\nb:\n  c: *missing\n', 'x.yaml').message,
      'x.yaml: invalid YAML at line 3, column 6: Unresolved alias (the anchor must be set before the alias): missing',
    );
  });
});

describe('isRemote', () => {
  it('recognises URLs and go-getter style repository paths but not local paths', () => {
    assert.equal(isRemote('https://example.com/x.yaml'), true);
    assert.equal(isRemote('github.com/org/repo/path?ref=v1'), true);
    assert.equal(isRemote('git@github.com:org/repo.git'), true);
    assert.equal(isRemote('../base'), false);
    assert.equal(isRemote('deploy.yaml'), false);
  });
});
