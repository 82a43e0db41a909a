// Packs and extracts a generated tree of 10,000 files (~50 MB) with this library, and the same tree with
// the system `tar czf` / `tar xzf` for scale. Prints one Markdown section; progress goes to stderr.
// Run: npm run bench -- artifact/bench/pack   (or: node --import tsx shared/artifact/bench/pack.bench.ts)
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { extractTarGz } from '../src/extract.ts';
import { packDirectory } from '../src/pack.ts';

const RUNS = 3;
const SMALL_FILES = 9_990;
const LARGE_FILES = 10;
const LARGE_BYTES = 2 * 1024 * 1024;

/** Deterministic pseudo-random generator so every run measures the same tree. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

async function generate(dir: string): Promise<{ files: number; bytes: number }> {
  const rand = rng(42);
  const words = [
    'apiVersion',
    'kind',
    'metadata',
    'name',
    'spec',
    'replicas',
    'image',
    'port',
    'labels',
    'app',
  ];
  let bytes = 0;
  for (let i = 0; i < SMALL_FILES; i++) {
    const sub = join(dir, `team-${i % 20}`, `app-${i % 200}`);
    if (i < 200) await mkdir(sub, { recursive: true });
    // YAML-like text of 1–5 KiB: compressible, like real manifests.
    const lines: string[] = [];
    const target = 1024 + Math.floor(rand() * 4096);
    let len = 0;
    while (len < target) {
      const line = `${words[Math.floor(rand() * words.length)]}: value-${Math.floor(rand() * 1e6)}\n`;
      lines.push(line);
      len += line.length;
    }
    const body = lines.join('');
    await writeFile(join(sub, `manifest-${i}.yaml`), body);
    bytes += Buffer.byteLength(body);
  }
  await mkdir(join(dir, 'blobs'), { recursive: true });
  for (let i = 0; i < LARGE_FILES; i++) {
    // Half random bytes (incompressible), half repeated text.
    const buf = Buffer.alloc(LARGE_BYTES);
    for (let j = 0; j < LARGE_BYTES / 2; j++) buf[j] = Math.floor(rand() * 256);
    buf.fill('0123456789abcdef\n', LARGE_BYTES / 2);
    await writeFile(join(dir, 'blobs', `blob-${i}.bin`), buf);
    bytes += buf.length;
  }
  return { files: SMALL_FILES + LARGE_FILES, bytes };
}

interface Sample {
  wallMs: number;
  cpuMs: number;
}

/** Wall time and this process's CPU time (user + system) of an in-process step. */
async function time(fn: () => Promise<unknown>): Promise<Sample> {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await fn();
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  return { wallMs, cpuMs: (cpu.user + cpu.system) / 1000 };
}

/** Wall time and the child's CPU time of a shell command (bash's `times` reports the children's CPU). */
function timeShell(script: string): Sample {
  const t0 = performance.now();
  const out = execFileSync('bash', ['-c', `${script} && times`], { encoding: 'utf8' });
  const wallMs = performance.now() - t0;
  const children = out.trim().split('\n').at(-1)!;
  const secs = [...children.matchAll(/(\d+)m([\d.]+)s/g)].map((m) => Number(m[1]) * 60 + Number(m[2]));
  return { wallMs, cpuMs: (secs[0]! + secs[1]!) * 1000 };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

const loadBefore = loadavg()[0]!;
const base = await mkdtemp(join(tmpdir(), 'mooring-pack-bench-'));
try {
  const tree = join(base, 'tree');
  process.stderr.write('bench: generating tree...\n');
  const { files, bytes } = await generate(tree);
  const mb = bytes / 1e6;

  const packMs: Sample[] = [];
  const extractMs: Sample[] = [];
  const tarCzfMs: Sample[] = [];
  const tarXzfMs: Sample[] = [];
  const digests = new Set<string>();
  let packedSize = 0;
  let tarSize = 0;
  for (let run = 0; run < RUNS; run++) {
    process.stderr.write(`bench: run ${run + 1}/${RUNS}\n`);
    const out = join(base, `mooring-${run}.tar.gz`);
    packMs.push(
      await time(async () => {
        const r = await packDirectory(tree, out);
        digests.add(r.digest);
        packedSize = r.size;
      }),
    );
    extractMs.push(await time(() => extractTarGz(out, join(base, `x-mooring-${run}`))));
    const tarOut = join(base, `tar-${run}.tar.gz`);
    tarCzfMs.push(timeShell(`tar czf '${tarOut}' -C '${tree}' .`));
    tarSize = (await stat(tarOut)).size;
    await mkdir(join(base, `x-tar-${run}`));
    tarXzfMs.push(timeShell(`tar xzf '${tarOut}' -C '${join(base, `x-tar-${run}`)}'`));
    await rm(join(base, `x-mooring-${run}`), { recursive: true });
    await rm(join(base, `x-tar-${run}`), { recursive: true });
  }

  const wall = (xs: Sample[]) => median(xs.map((x) => x.wallMs));
  const cpu = (xs: Sample[]) => median(xs.map((x) => x.cpuMs));
  const row = (what: string, xs: Sample[]) =>
    `| ${what} | ${wall(xs).toFixed(0)} | ${cpu(xs).toFixed(0)} | ${(mb / (wall(xs) / 1000)).toFixed(1)} | ` +
    `${xs.map((x) => x.wallMs.toFixed(0)).join(', ')} |`;
  const tarVersion = execFileSync('tar', ['--version'], { encoding: 'utf8' }).split('\n')[0];
  const lines = [
    '## Artifact packing and extraction (shared/artifact)',
    '',
    `Input: a generated tree of ${files.toLocaleString('en')} files, ${mb.toFixed(1)} MB ` +
      `(${SMALL_FILES.toLocaleString('en')} YAML-like text files of 1–5 KiB in 200 folders, ` +
      `${LARGE_FILES} files of 2 MiB that are half random bytes). ` +
      `Median of ${RUNS} runs in one process on ${process.platform}/${process.arch}, Node ${process.version}; ` +
      `gzip level 6 on both sides; ${tarVersion} for scale. ` +
      `1-minute load average ${loadBefore.toFixed(1)} before, ${loadavg()[0]!.toFixed(1)} after: ` +
      'absolute times move with load, the side-by-side ratios less so.',
    '',
    '| step | median wall ms | median CPU ms | MB/s (wall, uncompressed) | runs (wall ms) |',
    '| --- | ---: | ---: | ---: | --- |',
    row('`packDirectory` (deterministic tar.gz + sha256)', packMs),
    row('`tar czf` same tree', tarCzfMs),
    row('`extractTarGz` (all guards on)', extractMs),
    row('`tar xzf` same archive', tarXzfMs),
    '',
    `Archive: ${(packedSize / 1e6).toFixed(1)} MB from \`packDirectory\`, ${(tarSize / 1e6).toFixed(1)} MB from \`tar czf\`. ` +
      `Wall ratio pack / tar czf: ${(wall(packMs) / wall(tarCzfMs)).toFixed(2)}×, ` +
      `CPU ratio ${(cpu(packMs) / cpu(tarCzfMs)).toFixed(2)}×; ` +
      `extract / tar xzf: wall ${(wall(extractMs) / wall(tarXzfMs)).toFixed(2)}×, ` +
      `CPU ${(cpu(extractMs) / cpu(tarXzfMs)).toFixed(2)}×. ` +
      `Digest identical across the ${RUNS} packs: ${digests.size === 1 ? 'yes' : 'NO'}.`,
    '',
    'Reproduce: `npm run bench -- artifact/bench/pack` (or `node --import tsx shared/artifact/bench/pack.bench.ts`).',
    '',
  ];
  process.stdout.write(lines.join('\n'));
} finally {
  await rm(base, { recursive: true, force: true });
}
