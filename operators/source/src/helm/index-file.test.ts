// The index of a Helm repository read from an untrusted server, and the chart version a range picks.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mergeValues } from './chart-package.ts';
import { chartDownload, indexUrlOf } from './credentials.ts';
import {
  InvalidIndexError,
  NoChartVersionError,
  normaliseIndex,
  selectChartVersion,
  validVersionRange,
} from './index-file.ts';

const MAX = 1 << 20;

const INDEX = `apiVersion: v1
entries:
  tiny:
    - name: tiny
      version: 1.0.0
      urls: [tiny-1.0.0.tgz]
      digest: ${'a'.repeat(64)}
    - name: tiny
      version: 2.0.0
      urls: [tiny-2.0.0.tgz]
    - name: tiny
      version: 1.10.0
      urls: [tiny-1.10.0.tgz]
    - name: tiny
      version: 1.2.0
      urls: [tiny-1.2.0.tgz]
    - name: tiny
      version: 1.11.0-rc.1
      urls: [tiny-1.11.0-rc.1.tgz]
    - name: tiny
      version: not-a-version
      urls: [bad.tgz]
  alpha:
    - name: alpha
      version: v0.1.0
      urls: [https://cdn.example/alpha-0.1.0.tgz]
generated: "2026-01-01T00:00:00Z"
`;

test('an index is normalised: names sorted, versions highest first, invalid versions left out', () => {
  const { index, text, revision, skipped } = normaliseIndex(INDEX, MAX);
  assert.deepEqual(Object.keys(index.entries), ['alpha', 'tiny']);
  assert.deepEqual(
    index.entries.tiny!.map((v) => v.version),
    ['2.0.0', '1.11.0-rc.1', '1.10.0', '1.2.0', '1.0.0'],
  );
  assert.deepEqual(skipped, ['tiny not-a-version']);
  assert.match(revision, /^sha256:[0-9a-f]{64}$/);
  // The same index in another order is the same bytes and revision.
  const reordered = INDEX.replace(/ {2}alpha:\n(.*\n){3}/, '').replace(
    'entries:\n',
    `entries:\n  alpha:\n    - name: alpha\n      version: v0.1.0\n      urls: [https://cdn.example/alpha-0.1.0.tgz]\n`,
  );
  assert.notEqual(reordered, INDEX);
  const again = normaliseIndex(reordered, MAX);
  assert.equal(again.text, text);
  assert.equal(again.revision, revision);
  assert.equal(normaliseIndex(text, MAX).text, text, 'normalising is idempotent');
});

test('an index that is too large, not YAML, of the wrong shape or a YAML bomb is refused', () => {
  const refuses = (text: string, pattern: RegExp, max = MAX) =>
    assert.throws(
      () => normaliseIndex(text, max),
      (err: unknown) => err instanceof InvalidIndexError && pattern.test(err.message),
    );
  refuses(INDEX, /larger than the 100-byte limit/, 100);
  refuses('entries: [', /not YAML/);
  refuses('- a\n- b\n', /not a mapping/);
  refuses('entries: {}\n', /no apiVersion/);
  refuses('apiVersion: v1\nentries: [1]\n', /entries is not a mapping/);
  refuses('apiVersion: v1\nentries:\n  x:\n    - version: 1.0.0\n      urls: 3\n', /urls is not a list/);
  const bomb = [
    'apiVersion: v1',
    'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
    'b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]',
    'c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]',
    'd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]',
    'e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]',
    'f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]',
    'entries: {}',
  ].join('\n');
  refuses(bomb, /too many YAML aliases/);
  const deep = `apiVersion: v1\nx: ${'['.repeat(100)}${']'.repeat(100)}\n`;
  refuses(deep, /nested too deeply|aliases|not/);
});

test('a version range picks the highest match; pre-releases only when asked; none is an error', () => {
  const { index } = normaliseIndex(INDEX, MAX);
  assert.equal(selectChartVersion(index, 'tiny', undefined).version, '2.0.0');
  assert.equal(selectChartVersion(index, 'tiny', '*').version, '2.0.0');
  assert.equal(selectChartVersion(index, 'tiny', '>=1.0.0 <2.0.0').version, '1.10.0');
  assert.equal(selectChartVersion(index, 'tiny', '~1.2').version, '1.2.0');
  assert.equal(selectChartVersion(index, 'tiny', '1.0.0').version, '1.0.0');
  assert.equal(selectChartVersion(index, 'tiny', '>=1.11.0-rc.0 <2.0.0').version, '1.11.0-rc.1');
  assert.equal(selectChartVersion(index, 'alpha', '0.1.x').version, 'v0.1.0');
  assert.throws(
    () => selectChartVersion(index, 'tiny', '>=3'),
    (err: unknown) =>
      err instanceof NoChartVersionError && /no version of chart 'tiny' satisfies '>=3'/.test(err.message),
  );
  assert.throws(() => selectChartVersion(index, 'nope', '*'), /no chart named 'nope'/);
  assert.equal(validVersionRange('>=1 <2'), '>=1 <2');
  assert.equal(validVersionRange(''), '*');
  assert.equal(validVersionRange('not a range!'), undefined);
});

test('chart URLs resolve against the repository URL; credentials go to another host only with passCredentials', () => {
  const repo = new URL('https://charts.example/stable');
  assert.equal(indexUrlOf(repo).href, 'https://charts.example/stable/index.yaml');
  assert.equal(indexUrlOf(new URL('https://charts.example/')).href, 'https://charts.example/index.yaml');
  assert.deepEqual(chartDownload(repo, 'tiny-1.0.0.tgz', false), {
    url: new URL('https://charts.example/stable/tiny-1.0.0.tgz'),
    withCredentials: true,
  });
  assert.equal(chartDownload(repo, 'https://cdn.example/t.tgz', false).withCredentials, false);
  assert.equal(chartDownload(repo, 'https://cdn.example/t.tgz', true).withCredentials, true);
  assert.throws(() => chartDownload(repo, 'file:///etc/passwd', true), /not http/);
});

test('values merge as Helm merges them: mappings key by key, the later file winning', () => {
  assert.deepEqual(mergeValues({ a: { b: 1, c: [1] }, d: 'x' }, { a: { c: [2], e: true }, d: null }), {
    a: { b: 1, c: [2], e: true },
    d: null,
  });
});
