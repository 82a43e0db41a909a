import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { InvalidUpdatePathError, updateFiles } from './update-files.ts';

const IMAGES = new Map([['ns:app', { name: 'reg/app', tag: '2.0.0' }]]);
const MARKED = 'image: reg/app:1.0.0 # {"$imagepolicy": "ns:app"}\n';

test('updates marked YAML under the path only, skips invalid YAML and never follows links', async (t) => {
  const root = await mkdtemp(join(tmpdir(), 'mooring-update-'));
  const outside = await mkdtemp(join(tmpdir(), 'mooring-outside-'));
  t.after(() =>
    Promise.all([rm(root, { recursive: true, force: true }), rm(outside, { recursive: true, force: true })]),
  );
  await mkdir(join(root, 'deploy/nested'), { recursive: true });
  await mkdir(join(root, 'other'));
  await mkdir(join(root, '.git'));
  await writeFile(join(root, 'deploy/nested/app.yml'), MARKED);
  await writeFile(join(root, 'deploy/broken.yaml'), `a: [b ${MARKED}`);
  await writeFile(join(root, 'deploy/notes.txt'), MARKED);
  await writeFile(join(root, 'other/app.yaml'), MARKED);
  await writeFile(join(root, '.git/config.yaml'), MARKED);
  await writeFile(join(outside, 'app.yaml'), MARKED);
  await symlink(outside, join(root, 'deploy/linked'));

  const outcome = await updateFiles(root, './deploy', IMAGES);
  assert.deepEqual(
    outcome.files.map((f) => f.path),
    ['deploy/nested/app.yml'],
  );
  assert.deepEqual(
    outcome.skipped.map((s) => s.path),
    ['deploy/broken.yaml'],
  );
  assert.equal(await readFile(join(root, 'deploy/nested/app.yml'), 'utf8'), MARKED.replace('1.0.0', '2.0.0'));
  for (const untouched of ['other/app.yaml', 'deploy/notes.txt', '.git/config.yaml']) {
    assert.equal(await readFile(join(root, untouched), 'utf8'), MARKED, untouched);
  }
  assert.equal(await readFile(join(outside, 'app.yaml'), 'utf8'), MARKED);

  await assert.rejects(updateFiles(root, '../', IMAGES), InvalidUpdatePathError);
  await assert.rejects(updateFiles(root, 'deploy/linked', IMAGES), /leaves the repository/);
  await assert.rejects(updateFiles(root, 'missing', IMAGES), /is not a directory/);
});
