import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { TagStore, tagSetRevision } from './tag-store.ts';

test('tag store keeps small lists as text, large ones gzipped, and a new store reads them back', async (t) => {
  const root = await mkdtemp(join(tmpdir(), 'mooring-tags-'));
  t.after(() => rm(root, { recursive: true, force: true }));
  const store = new TagStore(root);
  assert.equal(await store.read('ns', 'app'), undefined);
  await store.write('ns', 'app', ['1.0.0', '1.1.0']);
  assert.deepEqual(await readdir(join(root, 'imagerepository/ns/app')), ['tags.txt']);
  const many = Array.from({ length: 8000 }, (_, i) => `build-${i}-0123456789`);
  await store.write('ns', 'app', many);
  assert.deepEqual(await readdir(join(root, 'imagerepository/ns/app')), ['tags.txt.gz']);
  // A restarted operator is a new TagStore on the same folder.
  assert.deepEqual(await new TagStore(root).read('ns', 'app'), many);
  await store.write('ns', 'app', []);
  assert.deepEqual(await store.read('ns', 'app'), []);
  await store.remove('ns', 'app');
  assert.equal(await store.read('ns', 'app'), undefined);
});

test('the revision of a tag set does not depend on order or duplicates, and changes with the set', () => {
  assert.equal(tagSetRevision(['b', 'a']), tagSetRevision(['a', 'b', 'a']));
  assert.notEqual(tagSetRevision(['a', 'b']), tagSetRevision(['a', 'b', 'c']));
});
