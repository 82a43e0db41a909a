import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pickSemverTag } from './semver-tags.ts';

const tags = [
  'latest',
  '1.0.0',
  'v1.2.0',
  '1.10.0',
  '2.0.0-rc.1',
  'v2.0.0',
  'main-abc123',
  '1.2',
  'sha-deadbeef',
];

test('picks the highest tag in range, ignoring non-semver tags', () => {
  const cases: [string, RegExp | undefined, string | undefined][] = [
    ['*', undefined, 'v2.0.0'],
    ['1.x', undefined, '1.10.0'],
    ['>=1.0.0 <1.5.0', undefined, 'v1.2.0'],
    ['~1.0', undefined, '1.0.0'],
    ['>=2.0.0-0', undefined, 'v2.0.0'],
    ['2.0.0-rc.1', undefined, '2.0.0-rc.1'],
    ['>=3.0.0', undefined, undefined],
    ['*', /^1\./, '1.10.0'],
    ['*', /^v/g, 'v2.0.0'],
  ];
  for (const [range, filter, want] of cases)
    assert.equal(pickSemverTag(tags, range, filter), want, `${range} ${filter}`);
});

test('a global regex filter gives the same answer every call', () => {
  const filter = /^v/g;
  assert.equal(pickSemverTag(tags, '*', filter), 'v2.0.0');
  assert.equal(pickSemverTag(tags, '*', filter), 'v2.0.0');
});

test('equal versions are picked deterministically', () => {
  assert.equal(pickSemverTag(['v1.0.0', '1.0.0'], '*'), pickSemverTag(['1.0.0', 'v1.0.0'], '*'));
});

test('an invalid range is a clear error', () => {
  assert.throws(() => pickSemverTag(tags, 'not a range!'), /semver range "not a range!" is not valid/);
});
