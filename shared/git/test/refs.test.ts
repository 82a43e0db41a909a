import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { GitError, GitRefNotFoundError } from '../src/errors.ts';
import { cleanSparseDir, parseLsRemote, pickSemverTag, refTarget, selectRef } from '../src/refs.ts';

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const C = 'c'.repeat(40);

describe('refTarget (Flux precedence)', () => {
  const cases: Array<[string, Parameters<typeof refTarget>[0], ReturnType<typeof refTarget>]> = [
    ['nothing set means branch master', {}, { kind: 'branch', branch: 'master' }],
    ['branch', { branch: 'main' }, { kind: 'branch', branch: 'main' }],
    ['tag beats branch', { branch: 'main', tag: 'v1' }, { kind: 'tag', tag: 'v1' }],
    ['semver beats tag', { tag: 'v1', semver: '^1' }, { kind: 'semver', range: '^1' }],
    [
      'name beats semver',
      { semver: '^1', name: 'refs/pull/1/head' },
      { kind: 'name', name: 'refs/pull/1/head' },
    ],
    ['commit beats name', { name: 'refs/x', commit: A.toUpperCase() }, { kind: 'commit', commit: A }],
    ['commit keeps its branch', { commit: A, branch: 'main' }, { kind: 'commit', commit: A, branch: 'main' }],
  ];
  for (const [name, spec, want] of cases) test(name, () => assert.deepEqual(refTarget(spec), want));

  test('refuses values git could read as options or that are not ref names', () => {
    for (const spec of [
      { branch: '-x' },
      { tag: '--upload-pack=evil' },
      { name: 'refs/a..b' },
      { branch: 'a b' },
      { commit: 'abc123' },
      { semver: 'not a range ~~' },
    ])
      assert.throws(() => refTarget(spec), GitError, JSON.stringify(spec));
  });
});

describe('selectRef and revisions', () => {
  const refs = parseLsRemote(
    [
      `${A}\tHEAD`,
      `${A}\trefs/heads/main`,
      `${B}\trefs/tags/v1.0.0`,
      `${C}\trefs/tags/v1.0.0^{}`,
      `${A}\trefs/tags/v1.10.0`,
      `${B}\trefs/tags/v2.0.0-rc.1`,
      `${B}\trefs/tags/latest`,
      `${C}\trefs/pull/7/head`,
      '',
    ].join('\n'),
  );

  test('parseLsRemote folds peeled tags into the tag', () => {
    assert.deepEqual(
      refs.find((r) => r.name === 'refs/tags/v1.0.0'),
      { name: 'refs/tags/v1.0.0', oid: B, peeled: C },
    );
  });

  test('annotated tags resolve to the peeled commit', () => {
    assert.deepEqual(selectRef(refs, refTarget({ tag: 'v1.0.0' }), 'u'), {
      commit: C,
      refName: 'refs/tags/v1.0.0',
      revision: `v1.0.0@sha1:${C}`,
    });
  });

  test('branch, name and semver revisions follow Flux', () => {
    assert.equal(selectRef(refs, refTarget({ branch: 'main' }), 'u').revision, `main@sha1:${A}`);
    assert.equal(
      selectRef(refs, refTarget({ name: 'refs/pull/7/head' }), 'u').revision,
      `refs/pull/7/head@sha1:${C}`,
    );
    assert.equal(
      selectRef(refs, refTarget({ name: 'refs/heads/main' }), 'u').revision,
      `refs/heads/main@sha1:${A}`,
    );
    assert.equal(selectRef(refs, refTarget({ semver: '1.x' }), 'u').revision, `v1.10.0@sha1:${A}`);
  });

  test('a missing ref names itself and the URL', () => {
    assert.throws(
      () => selectRef(refs, refTarget({ branch: 'dev' }), 'https://git.example/r.git'),
      (err: Error) =>
        err instanceof GitRefNotFoundError &&
        /branch 'dev'.*https:\/\/git\.example\/r\.git/.test(err.message),
    );
  });
});

describe('pickSemverTag', () => {
  test('highest match, v prefix allowed, non-semver and pre-releases outside the range ignored', () => {
    const tags = ['v1.0.0', '1.2.0', 'v1.10.0', 'latest', 'v2.0.0-rc.1', 'release-3'];
    assert.equal(pickSemverTag(tags, '^1.0.0'), 'v1.10.0');
    assert.equal(pickSemverTag(tags, '<1.5.0'), '1.2.0');
    assert.equal(pickSemverTag(tags, '>=2.0.0-0'), 'v2.0.0-rc.1');
    assert.equal(pickSemverTag(tags, '>=3.0.0'), undefined);
  });
});

describe('cleanSparseDir', () => {
  test('normalises slashes and refuses escapes and patterns', () => {
    assert.equal(cleanSparseDir('./deploy/prod/'), 'deploy/prod');
    for (const bad of ['../etc', 'a/../../b', '', '/', '*.yaml', '-x', '!keep'])
      assert.throws(() => cleanSparseDir(bad), GitError);
  });
});
