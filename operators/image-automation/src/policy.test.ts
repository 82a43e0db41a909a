import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { filterTags, InvalidPolicyError, selectLatest } from './policy.ts';

const TAGS = [
  '1.0.0',
  'v1.2.0',
  '1.10.1',
  '2.0.0-rc.1',
  '2.0.0',
  'latest',
  'main-5-abc',
  'main-12-def',
  'x.sig',
];

describe('selectLatest', () => {
  const cases: [
    string,
    Parameters<typeof selectLatest>[1],
    Parameters<typeof selectLatest>[2],
    string | undefined,
  ][] = [
    [
      'semver: highest in range, non-semver ignored',
      { semver: { range: '>=1.0.0 <2.0.0' } },
      undefined,
      '1.10.1',
    ],
    ['semver: Masterminds commas', { semver: { range: '>=1.0.0, <2.0.0' } }, undefined, '1.10.1'],
    ['semver: any version, prerelease excluded', { semver: { range: '*' } }, undefined, '2.0.0'],
    ['semver: leading v allowed', { semver: { range: '~1.2' } }, undefined, 'v1.2.0'],
    ['semver: nothing in range', { semver: { range: '>=3' } }, undefined, undefined],
    ['alphabetical asc: last wins', { alphabetical: { order: 'asc' } }, { pattern: '^main-' }, 'main-5-abc'],
    [
      'alphabetical desc: lowest wins',
      { alphabetical: { order: 'desc' } },
      { pattern: '^main-' },
      'main-12-def',
    ],
    ['alphabetical default asc', { alphabetical: {} }, undefined, 'x.sig'],
    [
      'numerical asc with extract (named group, Go syntax)',
      { numerical: { order: 'asc' } },
      { pattern: '^main-(?P<n>\\d+)-', extract: '$n' },
      'main-12-def',
    ],
    [
      'numerical desc with extract $' + '{1}',
      { numerical: { order: 'desc' } },
      { pattern: '^main-(\\d+)-', extract: '$' + '{1}' } /* Go's ${1}, not a JS template */,
      'main-5-abc',
    ],
    ['numerical ignores non-numbers', { numerical: {} }, undefined, undefined],
    [
      'semver over an extracted value',
      { semver: { range: '>=1.0.0' } },
      { pattern: '^rel-(?<v>.*)$', extract: '$v' },
      undefined,
    ],
  ];
  for (const [name, policy, filter, want] of cases) {
    test(name, () => assert.equal(selectLatest(TAGS, policy, filter), want));
  }

  test('semver picks on the extracted value but returns the full tag', () => {
    assert.equal(
      selectLatest(
        ['app-1.2.0', 'app-1.10.0', 'web-9.0.0'],
        { semver: { range: '^1' } },
        { pattern: '^app-(?<v>.*)$', extract: '$v' },
      ),
      'app-1.10.0',
    );
  });

  test('numerical orders as numbers, not text', () => {
    assert.equal(selectLatest(['9', '10', '100', '20'], { numerical: { order: 'asc' } }), '100');
  });

  test('an invalid regular expression or range is an InvalidPolicyError naming the field', () => {
    assert.throws(
      () => filterTags(TAGS, { pattern: '^(unclosed' }),
      (e: Error) => e instanceof InvalidPolicyError && /filterTags\.pattern/.test(e.message),
    );
    assert.throws(() => selectLatest(TAGS, { semver: { range: 'not a range!' } }), InvalidPolicyError);
    assert.throws(() => selectLatest(TAGS, {}), InvalidPolicyError);
  });
});
