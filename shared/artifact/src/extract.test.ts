import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, it, type TestContext } from 'node:test';
import { gzipSync } from 'node:zlib';
import {
  buildTar,
  buildTarGz,
  type FixtureEntry,
  lieAboutFirstSize,
  manyEmptyFilesTar,
} from '../test/tar-fixtures.ts';
import { ArtifactTooLargeError, UnsafeArchiveError } from './errors.ts';
import { extractTarGz } from './extract.ts';
import { packDirectory } from './pack.ts';

async function tempDir(t: TestContext): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'mooring-extract-test-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** Extracts a hostile archive into <tmp>/work/out, asserting the error and that nothing was left behind. */
async function assertRefused(
  t: TestContext,
  archive: Buffer,
  errorType: typeof UnsafeArchiveError | typeof ArtifactTooLargeError,
  pattern: RegExp,
  limits = {},
): Promise<void> {
  const base = await tempDir(t);
  const work = join(base, 'work');
  await mkdir(work);
  await assert.rejects(extractTarGz(Readable.from([archive]), join(work, 'out'), limits), (err: Error) => {
    assert.ok(err instanceof errorType, `expected ${errorType.name}, got ${err.name}: ${err.message}`);
    assert.match(err.message, pattern);
    return true;
  });
  assert.deepEqual(await readdir(work), [], 'the scratch directory must be removed');
  assert.deepEqual(await readdir(base), ['work'], 'nothing may be written next to the destination');
}

const file = (name: string, body = 'x'): FixtureEntry => ({ header: { name, type: 'file' }, body });

describe('extractTarGz', () => {
  it('extracts what packDirectory packed, with contents and masked modes', async (t) => {
    const base = await tempDir(t);
    const src = join(base, 'src');
    await mkdir(join(src, 'deploy', 'empty'), { recursive: true });
    await writeFile(join(src, 'deploy', 'app.yaml'), 'kind: ConfigMap\n');
    await writeFile(join(src, 'run.sh'), '#!/bin/sh\n', { mode: 0o775 });
    await packDirectory(src, join(base, 'a.tar.gz'));
    const res = await extractTarGz(join(base, 'a.tar.gz'), join(base, 'out'));
    assert.deepEqual(res, { dir: join(base, 'out'), files: 2, bytes: 26 });
    assert.equal(await readFile(join(base, 'out', 'deploy', 'app.yaml'), 'utf8'), 'kind: ConfigMap\n');
    assert.equal((await stat(join(base, 'out', 'run.sh'))).mode & 0o7777, 0o755);
    assert.equal((await stat(join(base, 'out', 'deploy', 'app.yaml'))).mode & 0o7777, 0o644);
    assert.ok((await stat(join(base, 'out', 'deploy', 'empty'))).isDirectory());
  });

  it('drops setuid, setgid and group/other write bits', async (t) => {
    const base = await tempDir(t);
    const archive = await buildTarGz([
      { header: { name: 'suid', type: 'file', mode: 0o4777 }, body: 'x' },
      { header: { name: 'plain', type: 'file', mode: 0o2666 }, body: 'y' },
    ]);
    await extractTarGz(Readable.from([archive]), join(base, 'out'));
    assert.equal((await stat(join(base, 'out', 'suid'))).mode & 0o7777, 0o755);
    assert.equal((await stat(join(base, 'out', 'plain'))).mode & 0o7777, 0o644);
  });

  it('accepts ./-prefixed names as written by `tar czf - -C dir .`', async (t) => {
    const base = await tempDir(t);
    const archive = await buildTarGz([
      { header: { name: './', type: 'directory' } },
      { header: { name: './a/', type: 'directory' } },
      file('./a/b.txt', 'hello'),
    ]);
    const res = await extractTarGz(Readable.from([archive]), join(base, 'out'));
    assert.equal(res.files, 1);
    assert.equal(await readFile(join(base, 'out', 'a', 'b.txt'), 'utf8'), 'hello');
  });

  it('refuses to replace a destination that already has files in it', async (t) => {
    const base = await tempDir(t);
    await mkdir(join(base, 'out'));
    await writeFile(join(base, 'out', 'keep'), 'mine');
    const archive = await buildTarGz([file('a')]);
    await assert.rejects(extractTarGz(Readable.from([archive]), join(base, 'out')), /cannot move/);
    assert.deepEqual(await readdir(join(base, 'out')), ['keep']);
    assert.deepEqual(await readdir(base), ['out']);
  });

  describe('refuses hostile archives and leaves nothing behind', () => {
    it('path traversal with ..', async (t) => {
      await assertRefused(
        t,
        await buildTarGz([file('ok'), file('../../escaped')]),
        UnsafeArchiveError,
        /"\.\."/,
      );
    });
    it('.. hidden inside a path', async (t) => {
      await assertRefused(t, await buildTarGz([file('a/../../b')]), UnsafeArchiveError, /"\.\." segment/);
    });
    it('absolute path', async (t) => {
      await assertRefused(
        t,
        await buildTarGz([file('/tmp/mooring-abs-test')]),
        UnsafeArchiveError,
        /absolute/,
      );
      assert.equal(existsSync('/tmp/mooring-abs-test'), false);
    });
    it('backslash path', async (t) => {
      await assertRefused(t, await buildTarGz([file('..\\..\\x')]), UnsafeArchiveError, /backslash/);
    });
    it('NUL byte in a pax path', async (t) => {
      const archive = await buildTarGz([
        { header: { name: 'a', type: 'file', pax: { path: 'a\0b' } }, body: 'x' },
      ]);
      await assertRefused(t, archive, UnsafeArchiveError, /NUL/);
    });
    it('drive letter', async (t) => {
      await assertRefused(t, await buildTarGz([file('C:evil')]), UnsafeArchiveError, /drive letter/);
    });
    it('symlink to /etc followed by a file through it', async (t) => {
      const archive = await buildTarGz([
        { header: { name: 'etc', type: 'symlink', linkname: '/etc' } },
        file('etc/mooring-test', 'pwned'),
      ]);
      await assertRefused(t, archive, UnsafeArchiveError, /"etc".*symlink is not allowed/);
    });
    it('hardlink to a file outside', async (t) => {
      const archive = await buildTarGz([{ header: { name: 'h', type: 'link', linkname: '../x' } }]);
      await assertRefused(t, archive, UnsafeArchiveError, /link is not allowed/);
    });
    it('character device', async (t) => {
      const archive = await buildTarGz([
        { header: { name: 'null', type: 'character-device', devmajor: 1, devminor: 3 } },
      ]);
      await assertRefused(t, archive, UnsafeArchiveError, /character-device is not allowed/);
    });
    it('fifo', async (t) => {
      await assertRefused(
        t,
        await buildTarGz([{ header: { name: 'p', type: 'fifo' } }]),
        UnsafeArchiveError,
        /fifo/,
      );
    });
    it('duplicate names (a file replaced by a later entry)', async (t) => {
      await assertRefused(
        t,
        await buildTarGz([file('a/b', '1'), file('a//b', '2')]),
        UnsafeArchiveError,
        /duplicate/,
      );
    });
    it('a file where a directory is needed', async (t) => {
      await assertRefused(
        t,
        await buildTarGz([file('a'), file('a/b')]),
        UnsafeArchiveError,
        /"a\/b".*parent directory is a file/,
      );
    });
    it('10,000-entry bomb over the entry limit', async (t) => {
      const bomb = gzipSync(await manyEmptyFilesTar(10_000));
      await assertRefused(t, bomb, ArtifactTooLargeError, /more than 100 entries/, { maxEntries: 100 });
    });
    it('a file bigger than the per-file limit', async (t) => {
      const archive = await buildTarGz([file('big', 'x'.repeat(2048))]);
      await assertRefused(t, archive, ArtifactTooLargeError, /"big".*per-file limit of 1\.0 KiB/, {
        maxFileBytes: 1024,
      });
    });
    it('files that add up past the total limit', async (t) => {
      const archive = await buildTarGz([file('a', 'x'.repeat(600)), file('b', 'y'.repeat(600))]);
      await assertRefused(t, archive, ArtifactTooLargeError, /total limit/, { maxTotalBytes: 1000 });
    });
    it('gzip bomb: a small download that expands past the cap', async (t) => {
      // 64 MiB of zeros after a valid tar compress to ~64 KiB; tar readers skip zero blocks forever.
      const bomb = gzipSync(Buffer.concat([await buildTar([file('a')]), Buffer.alloc(64 * 1024 * 1024)]), {
        level: 1,
      });
      assert.ok(bomb.length < 1024 * 1024);
      await assertRefused(t, bomb, ArtifactTooLargeError, /expands past/, {
        maxTotalBytes: 1024 * 1024,
        maxEntries: 10,
      });
    });
    it('a header that claims fewer bytes than the body has', async (t) => {
      const tar = lieAboutFirstSize(await buildTar([file('a', 'x'.repeat(1000)), file('b')]), 10);
      await assertRefused(t, gzipSync(tar), UnsafeArchiveError, /malformed tar/);
    });
    it('a header that claims more bytes than the archive has', async (t) => {
      const tar = lieAboutFirstSize(await buildTar([file('a', 'abc')]), 100_000);
      await assertRefused(t, gzipSync(tar), UnsafeArchiveError, /\(archive\)/);
    });
    it('a header that claims more than the per-file limit', async (t) => {
      const tar = lieAboutFirstSize(await buildTar([file('a', 'abc')]), 10 * 1024 * 1024);
      await assertRefused(t, gzipSync(tar), ArtifactTooLargeError, /"a".*per-file limit/, {
        maxFileBytes: 1024,
      });
    });
    it('bytes that are not gzip', async (t) => {
      await assertRefused(t, Buffer.from('<html>not an archive</html>'), UnsafeArchiveError, /gzip/);
    });
  });
});
