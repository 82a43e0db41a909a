import { closeSync, constants, createReadStream, fchmodSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { mkdir, mkdtemp, open, rename, rm } from 'node:fs/promises';
import { basename, dirname, isAbsolute, resolve, sep } from 'node:path';
import { type Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { extract as tarExtract } from 'tar-stream';
import { ArtifactTooLargeError, UnsafeArchiveError } from './errors.ts';
import { type ArtifactLimits, formatBytes, resolveLimits } from './limits.ts';
import { TimeSlicer } from './time-slice.ts';

/** What {@link extractTarGz} wrote. */
export interface ExtractResult {
  /** The directory now holding the files (`destDir`). */
  dir: string;
  /** Regular files written. */
  files: number;
  /** Bytes of regular file content written. */
  bytes: number;
}

// Headers, pax records and padding may add this much per entry on top of file content; it bounds the
// decompressed stream so a gzip bomb of zero blocks (which tar readers skip silently) cannot spin forever.
const TAR_OVERHEAD_PER_ENTRY = 3 * 512;
const TAR_OVERHEAD_FIXED = 1024 * 1024;

const WRITE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
/** Entries up to this size are buffered and written with one synchronous call sequence. */
const SMALL_FILE_BYTES = 256 * 1024;

/**
 * Extracts a tar.gz (a stream or a file path) into `destDir` with every path confined to it: only files
 * and directories, no `..`/absolute/NUL/backslash names, no duplicates, capped sizes and entry count,
 * modes masked to 0644/0755. Everything lands in a fresh temporary directory first and is renamed onto
 * `destDir` (which must not exist or be empty) only when the whole archive passed; on failure nothing is
 * left behind.
 */
export async function extractTarGz(
  source: Readable | string,
  destDir: string,
  limits?: ArtifactLimits,
): Promise<ExtractResult> {
  const lim = resolveLimits(limits);
  const dest = resolve(destDir);
  const parent = dirname(dest);
  await mkdir(parent, { recursive: true });
  // Same parent, so the final rename stays on one filesystem and is atomic.
  const scratch = await mkdtemp(resolve(parent, `.${basename(dest)}.extract-`));
  try {
    const result = await extractInto(source, scratch, lim);
    await rename(scratch, dest).catch((err: NodeJS.ErrnoException) => {
      throw new Error(`cannot move extracted artifact into ${dest}: ${err.code ?? err.message}`);
    });
    return { dir: dest, ...result };
  } catch (err) {
    await rm(scratch, { recursive: true, force: true });
    throw err;
  }
}

async function extractInto(
  source: Readable | string,
  root: string,
  lim: Required<ArtifactLimits>,
): Promise<{ files: number; bytes: number }> {
  const input = typeof source === 'string' ? createReadStream(source) : source;
  const maxTarBytes = lim.maxTotalBytes + lim.maxEntries * TAR_OVERHEAD_PER_ENTRY + TAR_OVERHEAD_FIXED;
  let tarBytes = 0;
  const cap = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      tarBytes += chunk.length;
      if (tarBytes > maxTarBytes) {
        cb(
          new ArtifactTooLargeError(
            `archive expands past ${formatBytes(maxTarBytes)} of tar data (limit ${formatBytes(lim.maxTotalBytes)} of files)`,
            maxTarBytes,
          ),
        );
      } else cb(null, chunk);
    },
  });
  const extractor = tarExtract();
  const feeding = pipeline(input, createGunzip(), cap, extractor);
  // Kept as a value so a failure on the feeding side is examined below, never left unhandled.
  let feedError: unknown;
  const fed = feeding.then(
    () => undefined,
    (err: unknown) => {
      feedError = err;
    },
  );

  const seen = new Set<string>();
  const made = new Set<string>([root]);
  const fileNames = new Set<string>();
  const slicer = new TimeSlicer();
  let entries = 0;
  let files = 0;
  let bytes = 0;
  try {
    for await (const entry of extractor) {
      const h = entry.header;
      entries++;
      if (entries > lim.maxEntries) {
        throw new ArtifactTooLargeError(`archive has more than ${lim.maxEntries} entries`, lim.maxEntries);
      }
      const rel = safeName(h.name, h.type);
      if (rel === '') {
        // The archive root itself (`./`): nothing to create.
        entry.resume();
        continue;
      }
      if (seen.has(rel)) throw new UnsafeArchiveError(h.name, 'duplicate entry name');
      seen.add(rel);
      const target = resolve(root, rel);
      if (!target.startsWith(root + sep))
        throw new UnsafeArchiveError(h.name, 'path escapes the destination');
      // Decided from names, not from the disk: small files may still be on their way there.
      for (let i = rel.indexOf('/'); i !== -1; i = rel.indexOf('/', i + 1)) {
        if (fileNames.has(rel.slice(0, i)))
          throw new UnsafeArchiveError(h.name, 'a parent directory is a file');
      }

      if (h.type === 'directory') {
        entry.resume();
        mkdirInside(target, h.name, made);
        continue;
      }
      if (h.size > lim.maxFileBytes) throw fileTooLarge(h.name, h.size, lim.maxFileBytes);
      if (bytes + h.size > lim.maxTotalBytes) throw totalTooLarge(lim.maxTotalBytes);
      fileNames.add(rel);
      mkdirInside(dirname(target), h.name, made);
      // Mask to 0644/0755: setuid, setgid, sticky and group/other write never survive.
      const mode = (h.mode & 0o111) !== 0 ? 0o755 : 0o644;
      const limitBytes = (written: number) => {
        // Counted on the bytes actually streamed, not on the header's word.
        if (written > lim.maxFileBytes) throw fileTooLarge(h.name, written, lim.maxFileBytes);
        if (bytes + written > lim.maxTotalBytes) throw totalTooLarge(lim.maxTotalBytes);
      };
      let written = 0;
      if (h.size <= SMALL_FILE_BYTES) {
        const chunks: Buffer[] = [];
        for await (const chunk of entry) {
          written += (chunk as Buffer).length;
          limitBytes(written);
          chunks.push(chunk as Buffer);
        }
        checkStreamed(h.name, h.size, written);
        writeWholeSync(target, Buffer.concat(chunks), mode, h.name);
        await slicer.yieldIfDue();
      } else {
        const fh = await open(target, WRITE_FLAGS, 0o600).catch((err: unknown) => {
          throw cannotCreate(h.name, err);
        });
        try {
          for await (const chunk of entry) {
            written += (chunk as Buffer).length;
            limitBytes(written);
            await fh.write(chunk as Buffer);
          }
          await fh.chmod(mode);
        } finally {
          await fh.close();
        }
        checkStreamed(h.name, h.size, written);
      }
      bytes += written;
      files++;
    }
  } catch (err) {
    extractor.destroy();
    input.destroy();
    await fed;
    throw wrapFeedError(feedError, err);
  }
  await fed;
  if (feedError !== undefined) throw wrapFeedError(feedError, undefined);
  return { files, bytes };
}

/** Validates an entry name and returns it normalised (no `.` or empty segments, no trailing slash). */
function safeName(name: string, type: string): string {
  if (type !== 'file' && type !== 'directory') {
    throw new UnsafeArchiveError(name, `entry type ${type} is not allowed (only files and directories)`);
  }
  if (name.includes('\0')) throw new UnsafeArchiveError(name, 'name contains a NUL byte');
  if (name.includes('\\')) throw new UnsafeArchiveError(name, 'name contains a backslash');
  if (name.startsWith('/') || isAbsolute(name)) throw new UnsafeArchiveError(name, 'absolute path');
  if (/^[a-zA-Z]:/.test(name)) throw new UnsafeArchiveError(name, 'name starts with a drive letter');
  const parts = name.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.includes('..')) throw new UnsafeArchiveError(name, 'name contains a ".." segment');
  if (parts.length === 0 && type !== 'directory') throw new UnsafeArchiveError(name, 'empty file name');
  return parts.join('/');
}

function mkdirInside(dir: string, entryName: string, made: Set<string>): void {
  if (made.has(dir)) return;
  // The scratch dir is fresh and only this code writes into it (never a symlink), so a plain recursive
  // mkdir cannot be redirected; a file in the way means the archive is self-contradictory.
  try {
    mkdirSync(dir, { recursive: true, mode: 0o755 });
  } catch (err) {
    throw new UnsafeArchiveError(
      entryName,
      `cannot create its directory (${(err as NodeJS.ErrnoException).code})`,
    );
  }
  made.add(dir);
}

function cannotCreate(entryName: string, err: unknown): UnsafeArchiveError {
  return new UnsafeArchiveError(
    entryName,
    `cannot create file (${(err as NodeJS.ErrnoException).code ?? err})`,
  );
}

/** Writes a small file in one go; synchronous on purpose (see time-slice.ts). */
function writeWholeSync(target: string, body: Buffer, mode: number, entryName: string): void {
  let fd: number;
  try {
    fd = openSync(target, WRITE_FLAGS, 0o600);
  } catch (err) {
    throw cannotCreate(entryName, err);
  }
  try {
    for (let off = 0; off < body.length; ) off += writeSync(fd, body, off);
    fchmodSync(fd, mode);
  } finally {
    closeSync(fd);
  }
}

function checkStreamed(name: string, declared: number, written: number): void {
  if (written !== declared) {
    throw new UnsafeArchiveError(name, `header says ${declared} bytes but ${written} were streamed`);
  }
}

function fileTooLarge(name: string, size: number, limit: number): ArtifactTooLargeError {
  return new ArtifactTooLargeError(
    `archive entry ${JSON.stringify(name)} is ${formatBytes(size)} or more, over the per-file limit of ${formatBytes(limit)}`,
    limit,
  );
}

function totalTooLarge(limit: number): ArtifactTooLargeError {
  return new ArtifactTooLargeError(`archive content is over the total limit of ${formatBytes(limit)}`, limit);
}

/**
 * Picks the error that explains the failure: a typed error from the loop or the byte counter beats the
 * "stream destroyed" noise it causes on the other side.
 */
function wrapFeedError(feedError: unknown, loopError: unknown): Error {
  const errs = [loopError, feedError].filter((e): e is Error => e instanceof Error);
  const typed = errs.find((e) => e instanceof UnsafeArchiveError || e instanceof ArtifactTooLargeError);
  if (typed) return typed;
  const code = (e: Error) => (e as NodeJS.ErrnoException).code ?? '';
  const gzip = errs.find((e) => code(e).startsWith('Z_'));
  if (gzip) return new UnsafeArchiveError('(archive)', `not a valid gzip stream (${gzip.message})`);
  const real = errs.find((e) => code(e) !== 'ERR_STREAM_PREMATURE_CLOSE' && !/destroyed/i.test(e.message));
  if (!real) return new UnsafeArchiveError('(archive)', 'the archive stream ended early');
  // errno-style codes (ENOENT, ENOSPC, ...) are I/O failures on our side, not a bad archive.
  if (/^E[A-Z]+$/.test(code(real))) return new Error(`cannot extract archive: ${real.message}`);
  return new UnsafeArchiveError('(archive)', `malformed tar stream (${real.message})`);
}
