// Fuzzes artifact extraction (shared/artifact/src/extract.ts): random and hostile tar.gz archives
// (path traversal, symlinks, hardlinks, devices, long and odd names, lying sizes, damaged headers,
// truncated and corrupt gzip, chunked streams). Each ends in an UnsafeArchiveError or an
// ArtifactTooLargeError, or in plain files and directories under the destination; after every case
// the filesystem is checked: nothing outside the destination changed, no scratch directory is left.
import assert from 'node:assert/strict';
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { Readable } from 'node:stream';
import { after, describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import {
  type ArtifactLimits,
  ArtifactTooLargeError,
  extractTarGz,
  UnsafeArchiveError,
} from '@mooring/artifact';
import {
  assertClearError,
  type ByteEdit,
  byteEdits,
  check,
  corpusFiles,
  fc,
  knownBugs,
  mutateBytes,
} from './fuzz.ts';

/** One archive member as written: raw typeflag, the size the header claims, the body it carries. */
interface Entry {
  name: string;
  type: string;
  mode: number;
  linkname: string;
  uid: number;
  body: Buffer;
  /** The header's size field when it lies about the body. */
  claimedSize?: number;
  /** How a name longer than the 100-byte field is carried. */
  longNames: 'pax' | 'gnu' | 'prefix' | 'truncate';
  pax?: Record<string, string>;
}

const TYPEFLAGS: Record<string, string> = {
  file: '0',
  'old-file': '\0',
  directory: '5',
  symlink: '2',
  link: '1',
  'character-device': '3',
  'block-device': '4',
  fifo: '6',
  'contiguous-file': '7',
  'pax-header': 'x',
  'pax-global-header': 'g',
  'gnu-long-path': 'L',
  'gnu-long-link-path': 'K',
  'gnu-sparse': 'S',
  'gnu-volume': 'V',
};

/** A number in an octal field of `width` bytes, or GNU base-256 when it does not fit. */
function numberField(n: number, width: number): Buffer {
  const octal = Math.max(0, Math.floor(n)).toString(8);
  if (octal.length < width) return Buffer.from(`${octal.padStart(width - 1, '0')}\0`, 'latin1');
  const b = Buffer.alloc(width);
  let v = BigInt(Math.floor(n));
  for (let i = width - 1; i > 0; i--) {
    b[i] = Number(v & 0xffn);
    v >>= 8n;
  }
  b[0] = 0x80;
  return b;
}

function header(
  name: string,
  typeflag: string,
  size: number,
  e: Pick<Entry, 'mode' | 'uid' | 'linkname'>,
  prefix = '',
): Buffer {
  const h = Buffer.alloc(512);
  h.write(name, 0, 100, 'utf8');
  numberField(e.mode, 8).copy(h, 100);
  numberField(e.uid, 8).copy(h, 108);
  numberField(0, 8).copy(h, 116);
  numberField(size, 12).copy(h, 124);
  numberField(0, 12).copy(h, 136);
  h.write(typeflag, 156, 1, 'latin1');
  h.write(e.linkname, 157, 100, 'utf8');
  h.write('ustar\x0000', 257, 8, 'latin1');
  h.write(prefix, 345, 155, 'utf8');
  h.fill(0x20, 148, 156);
  let sum = 0;
  for (let i = 0; i < 512; i++) sum += h[i]!;
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 8, 'latin1');
  return h;
}

const pad = (b: Buffer) => Buffer.concat([b, Buffer.alloc((512 - (b.length % 512)) % 512)]);

function paxRecords(records: Record<string, string>): Buffer {
  const parts = Object.entries(records).map(([k, v]) => {
    const body = ` ${k}=${v}\n`;
    let len = Buffer.byteLength(body) + 1;
    while (String(len).length + Buffer.byteLength(body) !== len)
      len = String(len).length + Buffer.byteLength(body);
    return Buffer.from(`${len}${body}`);
  });
  return Buffer.concat(parts);
}

/** An uncompressed tar of the entries, written byte by byte here so any header can be made. */
function buildTar(entries: Entry[], endBlocks: number): Buffer {
  const blocks: Buffer[] = [];
  for (const e of entries) {
    const typeflag = TYPEFLAGS[e.type] ?? e.type.slice(0, 1);
    let name = e.name;
    let prefix = '';
    const long = Buffer.byteLength(e.name) > 100 || Buffer.byteLength(e.linkname) > 100;
    const pax = { ...e.pax };
    if (long && e.longNames === 'pax') {
      pax.path = e.name;
      if (Buffer.byteLength(e.linkname) > 100) pax.linkpath = e.linkname;
    } else if (long && e.longNames === 'gnu') {
      const n = Buffer.from(`${e.name}\0`);
      blocks.push(header('././@LongLink', 'L', n.length, e), pad(n));
    } else if (long && e.longNames === 'prefix') {
      const cut = e.name.lastIndexOf('/', 155);
      if (cut > 0) [prefix, name] = [e.name.slice(0, cut), e.name.slice(cut + 1)];
    }
    if (Object.keys(pax).length > 0) {
      const records = paxRecords(pax);
      blocks.push(header('PaxHeader', 'x', records.length, e), pad(records));
    }
    const body = typeflag === '0' || typeflag === '\0' || typeflag === '7' ? e.body : Buffer.alloc(0);
    blocks.push(header(name, typeflag, e.claimedSize ?? body.length, e, prefix), pad(body));
  }
  blocks.push(Buffer.alloc(512 * endBlocks));
  return Buffer.concat(blocks);
}

// ---- the filesystem around each case ---------------------------------------------------------------

const root = mkdtempSync(join(tmpdir(), 'mooring-fuzz-tar-'));
after(() => rmSync(root, { recursive: true, force: true }));
let caseNo = 0;

/** Every path under dir (relative), with its kind, not following links. */
function snapshot(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      const s = lstatSync(p);
      const kind = s.isSymbolicLink() ? 'link' : s.isDirectory() ? 'dir' : s.isFile() ? 'file' : 'other';
      out.push(JSON.stringify([relative(dir, p), kind, s.isFile() ? s.size : 0]));
      if (kind === 'dir') walk(p);
    }
  };
  walk(dir);
  return out;
}

const outcomes = { extracted: 0, refused: 0 };

/**
 * Extracts into <case>/work/out next to a sentinel tree (<case>/sentinel, <case>/work/sibling) that
 * hostile names aim at; checks the outcome and the whole case directory afterwards.
 */
async function checkExtract(archive: Buffer, chunk: number, limits: ArtifactLimits): Promise<void> {
  const base = join(root, String(caseNo++));
  const work = join(base, 'work');
  mkdirSync(join(base, 'sentinel'), { recursive: true });
  mkdirSync(join(work, 'sibling'), { recursive: true });
  writeFileSync(join(base, 'sentinel', 'keep'), 'sentinel');
  writeFileSync(join(work, 'sibling', 'keep'), 'sibling');
  const around = snapshot(base);
  const out = join(work, 'out');
  const chunks: Buffer[] = [];
  for (let i = 0; i < archive.length; i += chunk) chunks.push(archive.subarray(i, i + chunk));
  try {
    let result: Awaited<ReturnType<typeof extractTarGz>> | undefined;
    try {
      result = await extractTarGz(Readable.from(chunks), out, limits);
    } catch (err) {
      assertClearError(err, [UnsafeArchiveError, ArtifactTooLargeError]);
      outcomes.refused++;
      if (process.env.MOORING_FUZZ_VERBOSE)
        console.error((err as Error).message.replace(/"[^"]*"/, '…').slice(0, 70));
    }
    const after = snapshot(base);
    if (result === undefined) {
      assert.deepEqual(after, around, 'a refused archive leaves the filesystem as it was');
      return;
    }
    outcomes.extracted++;
    // Everything else as it was; under out/ only plain files and directories, modes masked.
    assert.deepEqual(
      after.filter((p) => !(JSON.parse(p) as string[])[0]!.startsWith(`work${sep}out`)),
      around,
      'nothing outside the destination changed',
    );
    const inside = snapshot(out);
    let files = 0;
    let bytes = 0;
    for (const line of inside) {
      const [path, kind, size] = JSON.parse(line) as [string, string, number];
      assert.ok(kind === 'file' || kind === 'dir', `${path} is a ${kind}`);
      const mode = lstatSync(join(out, path!)).mode & 0o7777;
      if (kind === 'file') {
        files++;
        bytes += Number(size);
        assert.ok(mode === 0o644 || mode === 0o755, `${path} has mode ${mode.toString(8)}`);
      } else assert.equal(mode & 0o7022, 0, `${path} has mode ${mode.toString(8)}`);
    }
    assert.equal(result.files, files, 'the file count reported');
    assert.equal(result.bytes, bytes, 'the byte count reported');
    assert.equal(readFileSync(join(base, 'sentinel', 'keep'), 'utf8'), 'sentinel');
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}

// ---- archives ------------------------------------------------------------------------------------

const segment = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('a', 'b', 'deploy', 'app.yaml', 'x.txt', 'dir') },
  fc.constantFrom(
    '..',
    '.',
    '',
    ' ',
    '...',
    'sentinel',
    'sibling',
    'out',
    'keep',
    'C:',
    'a\\..\\b',
    'con',
    'é',
    '\u202e',
  ),
  fc.string({ minLength: 1, maxLength: 8, unit: 'binary' }),
  fc.integer({ min: 90, max: 300 }).map((n) => 'n'.repeat(n)),
);
const name = fc.oneof(
  { weight: 8, arbitrary: fc.array(segment, { minLength: 1, maxLength: 4 }).map((s) => s.join('/')) },
  fc.constantFrom(
    '../sentinel/pwned',
    '../../sentinel/pwned',
    '../sibling/pwned',
    '/tmp/pwned',
    './',
    '.',
    'a/../../b',
    'a/./b//c/',
    'a\0b',
    `${'d/'.repeat(200)}f`,
  ),
);
const entryType = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom('file', 'directory') },
  fc.constantFrom(
    'symlink',
    'link',
    'character-device',
    'block-device',
    'fifo',
    'contiguous-file',
    'pax-header',
    'pax-global-header',
    'gnu-long-link-path',
    'gnu-long-path',
    'old-file',
    'gnu-sparse',
    'gnu-volume',
  ),
  fc.string({ minLength: 1, maxLength: 1, unit: 'binary-ascii' }),
);
const entry: fc.Arbitrary<Entry> = fc.record({
  name,
  type: entryType,
  mode: fc.oneof(fc.constantFrom(0o644, 0o755, 0o4777, 0o7777, 0o000, 0o222), fc.nat({ max: 0o7777 })),
  linkname: fc.oneof(name, fc.constantFrom('', '/etc/passwd', '..', '../sentinel', '../../sentinel/keep')),
  uid: fc.constantFrom(0, 1000, 2 ** 21, 2 ** 40),
  body: fc.oneof(
    { weight: 8, arbitrary: fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b)) },
    { weight: 1, arbitrary: fc.integer({ min: 0, max: 300_000 }).map((n) => Buffer.alloc(n, 'x')) },
  ),
  claimedSize: fc.option(fc.oneof(fc.nat({ max: 2_000 }), fc.constantFrom(2 ** 33, 2 ** 40, 2 ** 52)), {
    nil: undefined,
    freq: 8,
  }),
  longNames: fc.constantFrom('pax' as const, 'gnu' as const, 'prefix' as const, 'truncate' as const),
  pax: fc.option(
    fc.dictionary(
      fc.constantFrom('path', 'linkpath', 'size', 'comment', 'mtime', 'uid', 'x', ''),
      fc.oneof(
        fc.string({ maxLength: 20 }),
        fc.constantFrom('-1', '99999999999999999999', '../sentinel/pwned', ''),
      ),
      { maxKeys: 3 },
    ),
    { nil: undefined, freq: 6 },
  ),
});

/** How the tar is damaged after packing: header bytes changed, a size lie, truncation, garbage. */
/** How the tar is damaged after it is written: header and body bytes changed, or cut short. */
const tarDamage = fc.oneof({ weight: 4, arbitrary: fc.constant(undefined) }, byteEdits);
const gzDamage = fc.oneof(
  { weight: 5, arbitrary: fc.constant(undefined) },
  byteEdits,
  fc.constant('not-gzip' as const),
  fc.constant('concatenated' as const),
);

const archive = fc.record({
  entries: fc.array(entry, { maxLength: 8 }),
  endBlocks: fc.constantFrom(2, 2, 2, 0, 1, 3),
  tarDamage,
  gzDamage,
});
const limits = fc.oneof(
  { weight: 3, arbitrary: fc.constant({}) },
  fc.record(
    {
      maxFileBytes: fc.nat({ max: 100_000 }),
      maxTotalBytes: fc.nat({ max: 200_000 }),
      maxEntries: fc.nat({ max: 6 }),
    },
    { requiredKeys: [] },
  ),
);

function render(a: {
  entries: Entry[];
  endBlocks: number;
  tarDamage: ByteEdit[] | undefined;
  gzDamage: unknown;
}): Buffer {
  let tar = buildTar(a.entries, a.endBlocks);
  if (a.tarDamage) tar = mutateBytes(tar, a.tarDamage);
  let gz = gzipSync(tar);
  if (Array.isArray(a.gzDamage)) gz = mutateBytes(gz, a.gzDamage);
  else if (a.gzDamage === 'not-gzip') gz = tar;
  else if (a.gzDamage === 'concatenated') gz = Buffer.concat([gz, gz]);
  return gz;
}

describe('fuzz: tar.gz extraction', () => {
  test('random and hostile archives: a clear refusal or files confined to the destination', async (t) => {
    await check(
      t,
      import.meta.url,
      fc.asyncProperty(archive, fc.integer({ min: 1, max: 70_000 }), limits, async (a, chunk, lim) => {
        await checkExtract(render(a), chunk, lim);
      }),
      250,
    );
    t.diagnostic(`${outcomes.extracted} extracted, ${outcomes.refused} refused`);
  });
});

describe('fuzz corpus: tar.gz archives', () => {
  const bugs = knownBugs('tar');
  for (const [file, bytes] of corpusFiles('tar')) {
    test(file, { todo: bugs[file] }, () => checkExtract(bytes, 512, {}));
  }
});
