import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { loadExclusionFilter } from './ignore-rules.ts';

async function tree(files: Record<string, string>): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'ignore-test-'));
  for (const [path, body] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), body);
  }
  return root;
}

test('Flux default exclusions drop VCS, CI and binary files and keep manifests', async (t) => {
  const root = await tree({ 'deploy/app.yaml': '' });
  t.after(() => rm(root, { recursive: true, force: true }));
  const excluded = await loadExclusionFilter(root, undefined);
  const keep = (path: string, isDir: boolean) => !excluded(path, isDir);
  const cases: [string, boolean, boolean][] = [
    ['.git', true, false],
    ['.github', true, false],
    ['deploy/.sops.yaml', false, false],
    ['logo.png', false, false],
    ['charts/app.tar.gz', false, false],
    ['.gitlab-ci.yml', false, false],
    ['deploy', true, true],
    ['deploy/app.yaml', false, true],
    ['README.md', false, true],
  ];
  for (const [path, isDir, kept] of cases) assert.equal(keep(path, isDir), kept, path);
});

test('spec.ignore replaces the defaults but .git stays out', async (t) => {
  const root = await tree({ 'a.yaml': '' });
  t.after(() => rm(root, { recursive: true, force: true }));
  const excluded = await loadExclusionFilter(root, '/docs/\n*.md\n!KEEP.md\n');
  const keep = (path: string, isDir: boolean) => !excluded(path, isDir);
  assert.equal(keep('KEEP.md', false), true);
  assert.equal(keep('.git', true), false);
  assert.equal(keep('docs', true), false);
  assert.equal(keep('notes.md', false), false);
  assert.equal(keep('logo.png', false), true, 'defaults no longer apply');
  assert.equal(keep('a.yaml', false), true);
});

test('.sourceignore files apply below their own folder, and ! re-includes', async (t) => {
  const root = await tree({
    '.sourceignore': 'secret-*.yaml\n',
    'apps/.sourceignore': 'tests/\n!secret-ok.yaml\n',
    'apps/tests/t.yaml': '',
    'apps/secret-ok.yaml': '',
    'other/tests/t.yaml': '',
  });
  t.after(() => rm(root, { recursive: true, force: true }));
  const excluded = await loadExclusionFilter(root, undefined);
  const keep = (path: string, isDir: boolean) => !excluded(path, isDir);
  assert.equal(keep('secret-x.yaml', false), false);
  assert.equal(keep('apps/secret-y.yaml', false), false);
  assert.equal(keep('apps/tests', true), false);
  assert.equal(keep('other/tests', true), true, 'the apps rule does not reach other/');
  assert.equal(keep('apps/app.yaml', false), true);
  assert.equal(keep('apps/secret-ok.yaml', false), true, 'the deeper file re-includes');
});
