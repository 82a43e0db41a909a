import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, symlink, truncate, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, it, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createGunzip } from 'node:zlib';
import { extract, type Header } from 'tar-stream';
import { ArtifactTooLargeError } from './errors.ts';
import { packDirectory } from './pack.ts';

async function tempDir(t: TestContext): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'mooring-pack-test-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

async function headersOf(file: string): Promise<Header[]> {
  const ex = extract();
  Readable.from([await readFile(file)])
    .pipe(createGunzip())
    .pipe(ex);
  const out: Header[] = [];
  for await (const entry of ex) {
    out.push(entry.header);
    entry.resume();
  }
  return out;
}

/** Writes the same logical tree; `reverse` creates it in the opposite order with other modes and times. */
async function writeTree(dir: string, reverse: boolean): Promise<void> {
  const files: [string, string][] = [
    ['a/b/c.yaml', 'kind: A\n'],
    ['a-b.txt', 'dash\n'],
    ['B.md', 'upper\n'],
    ['ä.txt', 'umlaut\n'],
    ['deploy/app.yaml', 'kind: Deployment\n'],
  ];
  for (const [rel, body] of reverse ? [...files].reverse() : files) {
    await mkdir(join(dir, rel, '..'), { recursive: true });
    await writeFile(join(dir, rel), body, { mode: reverse ? 0o664 : 0o600 });
    if (reverse) await utimes(join(dir, rel), new Date('2001-02-03'), new Date('2001-02-03'));
  }
  await mkdir(join(dir, 'empty'), { recursive: true });
  await writeFile(join(dir, 'run.sh'), '#!/bin/sh\n', { mode: reverse ? 0o700 : 0o755 });
  await chmod(join(dir, 'run.sh'), reverse ? 0o700 : 0o755);
}

describe('packDirectory', () => {
  it('packs the same tree to byte-identical archives regardless of creation order, modes and times', async (t) => {
    const base = await tempDir(t);
    await writeTree(join(base, 'one'), false);
    const first = await packDirectory(join(base, 'one'), join(base, 'one.tar.gz'));
    await sleep(1100); // a different second for anything that might leak a clock
    await writeTree(join(base, 'two'), true);
    const second = await packDirectory(join(base, 'two'), join(base, 'two.tar.gz'));
    const a = await readFile(join(base, 'one.tar.gz'));
    const b = await readFile(join(base, 'two.tar.gz'));
    assert.ok(a.equals(b), 'archives differ');
    assert.equal(first.digest, second.digest);
    assert.equal(first.digest, `sha256:${createHash('sha256').update(a).digest('hex')}`);
    assert.equal(first.size, a.length);
    assert.equal(first.files, 6);
  });

  it('writes sorted entries with zeroed owners and times and normalised modes', async (t) => {
    const base = await tempDir(t);
    await writeTree(join(base, 'src'), true);
    await packDirectory(join(base, 'src'), join(base, 'out.tar.gz'));
    const headers = await headersOf(join(base, 'out.tar.gz'));
    assert.deepEqual(
      headers.map((h) => h.name),
      [
        'B.md',
        'a/',
        'a/b/',
        'a/b/c.yaml',
        'a-b.txt',
        'deploy/',
        'deploy/app.yaml',
        'empty/',
        'run.sh',
        'ä.txt',
      ].sort((x, y) => Buffer.compare(Buffer.from(x.replace(/\/$/, '')), Buffer.from(y.replace(/\/$/, '')))),
    );
    for (const h of headers) {
      assert.equal(h.mtime.getTime(), 0, h.name);
      assert.equal(h.uid, 0);
      assert.equal(h.gid, 0);
      assert.equal(h.uname, '');
      assert.equal(h.gname, '');
      const expected = h.type === 'directory' || h.name === 'run.sh' ? 0o755 : 0o644;
      assert.equal(h.mode, expected, h.name);
    }
    // The system tar agrees with what we wrote.
    const listed = execFileSync('tar', ['tzf', join(base, 'out.tar.gz')], { encoding: 'utf8' });
    assert.equal(listed.trim().split('\n').length, headers.length);
  });

  it('skips symlinks (inside and outside), fifos and never follows a linked directory', async (t) => {
    const base = await tempDir(t);
    const src = join(base, 'src');
    await mkdir(join(src, 'real'), { recursive: true });
    await writeFile(join(src, 'real', 'f'), 'x');
    await symlink('/etc', join(src, 'etc-link'));
    await symlink('real', join(src, 'dir-link'));
    await symlink('real/f', join(src, 'file-link'));
    execFileSync('mkfifo', [join(src, 'pipe')]);
    const res = await packDirectory(src, join(base, 'out.tar.gz'));
    assert.deepEqual(res.skipped, ['dir-link', 'etc-link', 'file-link', 'pipe']);
    assert.equal(res.files, 1);
    assert.deepEqual(
      (await headersOf(join(base, 'out.tar.gz'))).map((h) => h.name),
      ['real/', 'real/f'],
    );
  });

  it('applies the filter and does not descend into excluded directories', async (t) => {
    const base = await tempDir(t);
    const src = join(base, 'src');
    await mkdir(join(src, '.git', 'objects'), { recursive: true });
    await writeFile(join(src, '.git', 'objects', 'x'), 'x');
    await writeFile(join(src, 'keep.yaml'), 'k');
    await writeFile(join(src, 'logo.png'), 'p');
    const seen: string[] = [];
    const res = await packDirectory(src, join(base, 'out.tar.gz'), {
      filter: (rel, isDir) => {
        seen.push(`${rel}${isDir ? '/' : ''}`);
        return rel === '.git' || rel.endsWith('.png');
      },
    });
    assert.deepEqual(seen.sort(), ['.git/', 'keep.yaml', 'logo.png']);
    assert.equal(res.files, 1);
    assert.deepEqual(
      (await headersOf(join(base, 'out.tar.gz'))).map((h) => h.name),
      ['keep.yaml'],
    );
  });

  it('refuses a 200 MB file under the default limit, naming the file and the limit', async (t) => {
    const base = await tempDir(t);
    const src = join(base, 'src');
    await mkdir(join(src, 'bin'), { recursive: true });
    await writeFile(join(src, 'bin', 'huge.bin'), '');
    await truncate(join(src, 'bin', 'huge.bin'), 200 * 1000 * 1000); // sparse: costs no disk
    await assert.rejects(packDirectory(src, join(base, 'out.tar.gz')), (err: Error) => {
      assert.ok(err instanceof ArtifactTooLargeError);
      assert.match(
        err.message,
        /file bin\/huge\.bin is 190\.7 MiB, over the per-file artifact limit of 100 MiB/,
      );
      return true;
    });
    assert.equal(existsSync(join(base, 'out.tar.gz')), false);
  });

  it('refuses a tree over maxTotalBytes and removes the partial output', async (t) => {
    const base = await tempDir(t);
    const src = join(base, 'src');
    await mkdir(src);
    for (let i = 0; i < 5; i++) await writeFile(join(src, `f${i}`), 'x'.repeat(300));
    await assert.rejects(
      packDirectory(src, join(base, 'out.tar.gz'), { maxTotalBytes: 1000 }),
      (err: Error) => err instanceof ArtifactTooLargeError && /limit of 1000 bytes/.test(err.message),
    );
    assert.equal(existsSync(join(base, 'out.tar.gz')), false);
  });

  it('streams files larger than a megabyte and keeps their bytes', async (t) => {
    const base = await tempDir(t);
    const src = join(base, 'src');
    await mkdir(src);
    const big = Buffer.alloc(3 * 1024 * 1024 + 7);
    for (let i = 0; i < big.length; i++) big[i] = (i * 31) & 0xff;
    await writeFile(join(src, 'big'), big);
    await packDirectory(src, join(base, 'out.tar.gz'));
    execFileSync('tar', ['xzf', join(base, 'out.tar.gz'), '-C', base]);
    assert.ok((await readFile(join(base, 'big'))).equals(big));
  });
});
