import assert from 'node:assert/strict';
import { test } from 'node:test';
import { IMAGE_GROUP, KINDS, SOURCE_GROUP, SOURCE_KINDS } from '@mooring/api';
import { GROUPS, matchKinds, parseSourceRef, requireKinds } from './kinds.ts';

const kindsOf = (word: string) => matchKinds([word], true)?.kinds.map((k) => k.kind);

test("the CLI's kind groups are the registry's source-group kinds, image kinds and every kind", () => {
  const sources = KINDS.filter((k) => k.group === SOURCE_GROUP).map((k) => k.kind);
  assert.deepEqual(sources, ['GitRepository', 'OCIRepository', 'HelmRepository', 'HelmChart']);
  assert.deepEqual(kindsOf('sources'), sources);
  assert.deepEqual(kindsOf('source'), sources);
  const images = KINDS.filter((k) => k.group === IMAGE_GROUP).map((k) => k.kind);
  assert.deepEqual(kindsOf('images'), images);
  assert.deepEqual(kindsOf('image'), images);
  assert.deepEqual(
    kindsOf('all'),
    KINDS.map((k) => k.kind),
  );
  assert.deepEqual(Object.keys(GROUPS), ['sources', 'source', 'images', 'image', 'all']);
  // Groups only where groups are allowed; the two-word phrases still name one kind.
  assert.equal(matchKinds(['sources'], false), undefined);
  assert.deepEqual(
    matchKinds(['source', 'git', 'x'], true)?.kinds.map((k) => k.kind),
    ['GitRepository'],
  );
  for (const [words, kind] of [
    ['sources helm', 'HelmRepository'],
    ['source helm', 'HelmRepository'],
    ['sources chart', 'HelmChart'],
    ['source chart', 'HelmChart'],
  ] as const) {
    assert.deepEqual(
      matchKinds(words.split(' '), true)?.kinds.map((k) => k.kind),
      [kind],
    );
  }
  assert.throws(() => requireKinds(['nope'], true), /sources, images, all/);
});

test('--source takes every source kind and names them when it is given another', () => {
  for (const kind of SOURCE_KINDS) {
    assert.deepEqual(parseSourceRef(`${kind}/ns/name`), { kind, namespace: 'ns', name: 'name' });
    assert.deepEqual(parseSourceRef(`${kind.toLowerCase()}/name`), { kind, name: 'name' });
  }
  assert.deepEqual(parseSourceRef('ocirepo/app'), { kind: 'OCIRepository', name: 'app' });
  assert.deepEqual(parseSourceRef('app'), { kind: 'GitRepository', name: 'app' });
  assert.throws(
    () => parseSourceRef('Kustomization/app'),
    new RegExp(`not a source a Kustomization can read: use ${SOURCE_KINDS.join(' or ')},`),
  );
});
