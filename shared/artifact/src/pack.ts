import { createHash } from 'node:crypto';
import {
  closeSync,
  constants,
  createWriteStream,
  fstatSync,
  lstatSync,
  openSync,
  readdirSync,
  readFileSync,
} from 'node:fs';
import { open, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { type Pack, pack as tarPack } from 'tar-stream';
import { ArtifactTooLargeError } from './errors.ts';
import { type ArtifactLimits, formatBytes, resolveLimits } from './limits.ts';
import { TimeSlicer } from './time-slice.ts';

/** Options for {@link packDirectory}. */
export interface PackOptions extends Pick<ArtifactLimits, 'maxFileBytes' | 'maxTotalBytes'> {
  /**
   * Returns true to EXCLUDE a path (Flux's ArchiveFileFilter semantics). `relPath` is POSIX and relative
   * to the packed directory, without a trailing slash. An excluded directory is not descended.
   */
  filter?: (relPath: string, isDir: boolean) => boolean;
}

/** What {@link packDirectory} wrote. */
export interface PackResult {
  /** `sha256:<hex>` of the tar.gz bytes. */
  digest: string;
  /** Size of the tar.gz in bytes. */
  size: number;
  /** Number of regular files packed. */
  files: number;
  /** Relative paths that were neither regular files nor directories (symlinks, sockets, devices). */
  skipped: string[];
}

/**
 * The gzip level is part of the artifact's identity (same input, same bytes), so it is fixed. Note the
 * compressed bytes may still change with the zlib that a future Node bundles.
 */
export const GZIP_LEVEL = 6;

/** Files up to this size are read whole (synchronously, see time-slice.ts); larger ones are streamed. */
const READ_WHOLE_MAX = 256 * 1024;

// O_NOFOLLOW: a file swapped for a symlink since the walk is refused, not followed. O_NONBLOCK: one
// swapped for a fifo does not hang the open; fstat then rejects it.
const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

interface WalkEntry {
  rel: string;
  abs: string;
  isDir: boolean;
  size: number;
}

/**
 * Packs `dir` into a deterministic tar.gz at `outFile`: sorted entries, directories and regular files
 * only (links are never followed), zeroed owners and times, modes 0644/0755, fixed gzip level.
 */
export async function packDirectory(
  dir: string,
  outFile: string,
  options: PackOptions = {},
): Promise<PackResult> {
  const limits = resolveLimits({ maxFileBytes: options.maxFileBytes, maxTotalBytes: options.maxTotalBytes });
  const slicer = new TimeSlicer();
  const skipped: string[] = [];
  const entries: WalkEntry[] = [];
  await walk(dir, '', options.filter, entries, skipped, limits, slicer);
  // Byte order, not locale order: the archive must not depend on the machine's collation.
  const byBytes = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));
  entries.sort((a, b) => byBytes(a.rel, b.rel));
  skipped.sort(byBytes);
  // Fail before writing anything when the walk already shows the tree is too big.
  checkTotal(
    entries.reduce((sum, e) => sum + e.size, 0),
    limits,
  );

  const hash = createHash('sha256');
  let size = 0;
  const tap = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      hash.update(chunk);
      size += chunk.length;
      cb(null, chunk);
    },
  });
  const tar = tarPack();
  const gzip = createGzip({ level: GZIP_LEVEL });
  // tar-stream's pack is a streamx stream; feeding it through pipe() keeps backpressure and errors flow
  // through the node pipeline below.
  const batch = coalesce(64 * 1024);
  tar.on('error', (err: Error) => batch.destroy(err));
  tar.pipe(batch);
  const writing = pipeline(batch, gzip, tap, createWriteStream(outFile, { mode: 0o644 }));
  // Register a handler now so an early write failure is not reported as unhandled while we pack.
  writing.catch(() => {});

  let files = 0;
  try {
    let total = 0;
    for (const entry of entries) {
      await slicer.yieldIfDue();
      if (entry.isDir) {
        await addEntry(tar, { name: `${entry.rel}/`, type: 'directory', mode: 0o755 });
        continue;
      }
      total += await addFile(tar, entry, limits, total);
      files++;
    }
    tar.finalize();
    await writing;
  } catch (err) {
    tar.destroy(err instanceof Error ? err : new Error(String(err)));
    await writing.catch(() => {});
    await rm(outFile, { force: true });
    throw err;
  }
  return { digest: `sha256:${hash.digest('hex')}`, size, files, skipped };
}

async function walk(
  root: string,
  relDir: string,
  filter: PackOptions['filter'],
  out: WalkEntry[],
  skipped: string[],
  limits: Required<ArtifactLimits>,
  slicer: TimeSlicer,
): Promise<void> {
  const absDir = relDir ? join(root, relDir) : root;
  for (const name of readdirSync(absDir)) {
    await slicer.yieldIfDue();
    const rel = relDir ? `${relDir}/${name}` : name;
    const abs = join(absDir, name);
    // lstat, never stat: a symlink is reported as itself and never followed.
    const st = lstatSync(abs);
    const isDir = st.isDirectory();
    if (filter?.(rel, isDir)) continue;
    if (isDir) {
      out.push({ rel, abs, isDir: true, size: 0 });
      await walk(root, rel, filter, out, skipped, limits, slicer);
    } else if (st.isFile()) {
      checkFileSize(rel, st.size, limits);
      out.push({ rel, abs, isDir: false, size: st.size });
    } else {
      skipped.push(rel);
    }
  }
}

function checkFileSize(rel: string, size: number, limits: Required<ArtifactLimits>): void {
  if (size > limits.maxFileBytes) {
    throw new ArtifactTooLargeError(
      `file ${rel} is ${formatBytes(size)}, over the per-file artifact limit of ${formatBytes(limits.maxFileBytes)}`,
      limits.maxFileBytes,
    );
  }
}

function checkTotal(total: number, limits: Required<ArtifactLimits>): void {
  if (total > limits.maxTotalBytes) {
    throw new ArtifactTooLargeError(
      `files add up to more than the artifact limit of ${formatBytes(limits.maxTotalBytes)}`,
      limits.maxTotalBytes,
    );
  }
}

function cannotRead(entry: WalkEntry, err: unknown): Error {
  return new Error(`cannot read ${entry.rel} while packing: ${(err as NodeJS.ErrnoException).code ?? err}`);
}

const modeOf = (st: { mode: number }) => ((st.mode & 0o111) !== 0 ? 0o755 : 0o644);

/** Adds one regular file and returns its size; the file is re-checked after opening in case it changed. */
async function addFile(
  tar: Pack,
  entry: WalkEntry,
  limits: Required<ArtifactLimits>,
  totalSoFar: number,
): Promise<number> {
  if (entry.size <= READ_WHOLE_MAX) {
    let fd: number;
    try {
      fd = openSync(entry.abs, READ_FLAGS);
    } catch (err) {
      throw cannotRead(entry, err);
    }
    let body: Buffer | undefined;
    let mode = 0o644;
    try {
      const st = fstatSync(fd);
      if (!st.isFile()) throw new Error(`${entry.rel} changed into a non-regular file while packing`);
      mode = modeOf(st);
      // Grown past the read-whole size since the walk: fall through to the streaming path below.
      if (st.size <= READ_WHOLE_MAX) body = readFileSync(fd);
    } finally {
      closeSync(fd);
    }
    if (body) {
      checkFileSize(entry.rel, body.length, limits);
      checkTotal(totalSoFar + body.length, limits);
      await addEntry(tar, { name: entry.rel, type: 'file', mode, size: body.length }, body);
      return body.length;
    }
  }

  const fh = await open(entry.abs, READ_FLAGS).catch((err: unknown) => {
    throw cannotRead(entry, err);
  });
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw new Error(`${entry.rel} changed into a non-regular file while packing`);
    checkFileSize(entry.rel, st.size, limits);
    checkTotal(totalSoFar + st.size, limits);
    const done = entryDone(tar, { name: entry.rel, type: 'file', mode: modeOf(st), size: st.size });
    const sink = done.sink;
    if (st.size > 0) {
      for await (const chunk of fh.createReadStream({ start: 0, end: st.size - 1, autoClose: false })) {
        if (!sink.write(chunk as Buffer))
          await new Promise<void>((resolve) => sink.once('drain', () => resolve()));
      }
    }
    // streamx's end() takes an optional final chunk; its typings mark it required.
    sink.end(undefined);
    await done.promise.catch((err: unknown) => {
      throw new Error(`${entry.rel} changed size while packing: ${(err as Error).message}`);
    });
    return st.size;
  } finally {
    await fh.close();
  }
}

/**
 * Joins tar-stream's many small pushes (a 512-byte header, a small body, padding) into larger chunks:
 * zlib runs one thread-pool job per write, and on trees of small files those jobs cost more than the
 * compression itself.
 */
function coalesce(bytes: number): Transform {
  let pending: Buffer[] = [];
  let size = 0;
  return new Transform({
    transform(chunk: Buffer, _enc, cb) {
      pending.push(chunk);
      size += chunk.length;
      if (size < bytes) return cb();
      const out = Buffer.concat(pending, size);
      pending = [];
      size = 0;
      cb(null, out);
    },
    flush(cb) {
      cb(null, size > 0 ? Buffer.concat(pending, size) : undefined);
    },
  });
}

interface EntryHeader {
  name: string;
  type: 'file' | 'directory';
  mode: number;
  size?: number;
}

function fixedHeader(h: EntryHeader) {
  // Every field that could carry the packer's identity or clock is pinned (tar-stream would fill mtime
  // with "now" if it were left out).
  return { ...h, mtime: new Date(0), uid: 0, gid: 0, uname: '', gname: '' };
}

function addEntry(tar: Pack, h: EntryHeader, body?: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    const cb = (err?: Error | null) => (err ? reject(err) : resolve());
    if (body) tar.entry(fixedHeader(h), body, cb);
    else tar.entry(fixedHeader(h), cb);
  });
}

function entryDone(tar: Pack, h: EntryHeader) {
  let sink!: ReturnType<Pack['entry']>;
  const promise = new Promise<void>((resolve, reject) => {
    sink = tar.entry(fixedHeader(h), (err?: Error | null) => (err ? reject(err) : resolve()));
  });
  return { sink, promise };
}
