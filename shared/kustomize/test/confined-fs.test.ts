import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { createConfinedFs, normalizeRel } from '../src/confined-fs.ts';

describe('normalizeRel', () => {
  it('normalises inside the root and refuses absolute paths, escapes, NUL and backslashes', () => {
    assert.equal(normalizeRel('a/./b/../c/'), 'a/c');
    assert.equal(normalizeRel('.'), '');
    assert.equal(normalizeRel('a/..'), '');
    assert.throws(() => normalizeRel('/etc/passwd'), /absolute path/);
    assert.throws(() => normalizeRel('a/../../x'), /leaves the root/);
    assert.throws(() => normalizeRel('a\0b'), /NUL/);
    assert.throws(() => normalizeRel('..\\x'), /backslash/);
  });
});

describe('createConfinedFs', () => {
  const base = mkdtempSync(join(tmpdir(), 'mooring-cfs-'));
  const root = join(base, 'root');
  mkdirSync(join(root, 'dir'), { recursive: true });
  writeFileSync(join(root, 'dir', 'b.txt'), 'bb');
  writeFileSync(join(root, 'a.txt'), 'aaaa');
  writeFileSync(join(base, 'outside.txt'), 'secret');
  symlinkSync(join(base, 'outside.txt'), join(root, 'out-link'));
  symlinkSync(join(root, 'a.txt'), join(root, 'in-link'));
  after(() => rmSync(base, { recursive: true, force: true }));

  it('reads, lists and tests paths inside the root', () => {
    const fs = createConfinedFs(root);
    assert.equal(fs.readFile('dir/b.txt').toString(), 'bb');
    assert.deepEqual(fs.readDir(''), ['a.txt', 'dir', 'in-link', 'out-link']);
    assert.equal(fs.isDir('dir'), true);
    assert.equal(fs.exists('missing'), false);
    assert.equal(fs.readFile('in-link').toString(), 'aaaa');
  });

  it('refuses a symlink out of the root without reading it', () => {
    const fs = createConfinedFs(root);
    assert.throws(() => fs.readFile('out-link'), /symlink that leaves the root/);
    assert.throws(() => fs.exists('out-link'), /symlink that leaves the root/);
  });

  it('counts files and bytes against the limits', () => {
    const fs = createConfinedFs(root, { maxTotalBytes: 5 });
    fs.readFile('a.txt');
    assert.throws(() => fs.readFile('dir/b.txt'), /total limit of 5 bytes/);
    const few = createConfinedFs(root, { maxFiles: 1 });
    few.readFile('a.txt');
    assert.throws(() => few.readFile('a.txt'), /too many files/);
    assert.throws(() => createConfinedFs(root, { maxFileBytes: 3 }).readFile('a.txt'), /over the limit of 3/);
  });
});
