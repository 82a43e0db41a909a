// `run-tests --unit` runs its unit files several to a Node process, not one process each: starting
// Node and loading a bundle cost each of 182 processes about 0.4 s of CPU, and c8 then read 182
// coverage files. Node 20 has no --test-isolation=none, and node:test's run() with several files
// still starts a process per file, so a batch is one small generated module (below) that node
// --test runs as a file, and that imports the batch's test files one after another.
//
// What a batch keeps as it was in a process of one's own:
// - Each file is a suite named by its path (`describe('shared/x/src/a.test.ts', ...)`), so every
//   test, pass or fail, is shown under its file, and a file that throws while it loads fails as
//   that suite. The file's top-level before/after/beforeEach hooks are that suite's: they run for
//   its tests only, and its after hooks when it is done. Suites add to the suite count only: the
//   test, pass and fail counts are the same as in a process per file.
// - A file is not loaded before the one ahead of it has finished, after hooks included: its
//   top-level code never runs while another file's tests do. The tests of one process run one at a
//   time, so a test that swaps something process-wide (Date.now, a process.on listener) and puts it
//   back in a finally or t.after still has the process to itself while it runs.
// - An error from an async resource a file left running names that file's test: node:test ties
//   every resource to the test that created it, whichever file runs when it fires.
// What it cannot keep: module state (a cache, a registry, a global a test leaves changed) lives on
// into the files after it. A file that needs a fresh process is listed in RUN_ALONE
// (hack/lib/test-files.ts), with the reason, and runs in a process of its own as before.
//
// Each file's own time and CPU (from the one before it finishing to its own end) go to
// $MOORING_TEST_TIMINGS, as hack/lib/file-timer.mjs writes each process's, so the runner can name
// the slowest files; they are kept in .mooring/unit-timings.json to balance the next run's batches.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** Seconds a file took when nothing is known of it: about the median of a unit file. */
const UNKNOWN_SECONDS = 1;

/**
 * Splits `files` into at most `count` batches of about equal time, the longest first (each file to
 * the batch with least so far, longest files first). `seconds` is what each took last time; a file
 * not in it counts as UNKNOWN_SECONDS. The same inputs give the same batches.
 */
export function planBatches(
  files: string[],
  count: number,
  seconds: ReadonlyMap<string, number>,
): string[][] {
  const weight = (f: string): number => seconds.get(f) ?? UNKNOWN_SECONDS;
  const order = [...files].sort((a, b) => weight(b) - weight(a) || a.localeCompare(b));
  const bins = Array.from({ length: Math.max(1, Math.min(count, files.length)) }, () => ({
    files: [] as string[],
    total: 0,
  }));
  for (const f of order) {
    const bin = bins.reduce((least, b) => (b.total < least.total ? b : least));
    bin.files.push(f);
    bin.total += weight(f);
  }
  // Within a batch, files keep the path order: neighbours share chunks and fixtures.
  return bins
    .filter((b) => b.files.length > 0)
    .sort((a, b) => b.total - a.total)
    .map((b) => b.files.sort());
}

/** One file of a batch: its name in the report (the .ts path) and the URL of the module to import. */
export interface BatchFile {
  name: string;
  url: string;
}

/**
 * Writes the module that runs `files` one after another, each as a suite named by its file (see the
 * top of this file). Plain JavaScript, so it runs on plain Node as well as under tsx.
 */
export function writeBatchEntry(path: string, batch: number, files: BatchFile[]): void {
  const list = JSON.stringify(
    files.map((f) => [f.name, f.url]),
    null,
    2,
  );
  const text = `// Written by hack/lib/unit-batches.ts for one run: batch ${batch}, ${files.length} test files.
import { appendFileSync, readFileSync } from 'node:fs';
import { describe } from 'node:test';

const FILES = ${list};
const timings = process.env.MOORING_TEST_TIMINGS;

/** Seconds of CPU of this process and its waited-for children, as hack/lib/file-timer.mjs reads them. */
function cpuSeconds() {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields.slice(11, 15).reduce((sum, f) => sum + Number(f), 0) / 100;
  } catch {
    return 0;
  }
}

let previous = Promise.resolve();
for (const [file, url] of FILES) {
  const ahead = previous;
  let started = 0;
  let cpu = 0;
  // At the top level, describe() returns a promise that settles when the suite has run, hooks
  // included. The wait for the file ahead is a promise made inside the suite's callback, so what
  // runs after it (the file's tests, hooks and suites) still belongs to this suite: node:test
  // finds a test's parent through the async resource that created it, and a promise made outside
  // the suite would hand them to the root.
  previous = describe(file, async () => {
    await new Promise((resolve) => ahead.then(resolve));
    started = performance.now();
    cpu = cpuSeconds();
    await import(url);
  }).then(() => {
    if (!timings) return;
    const seconds = (performance.now() - started) / 1000;
    const line = { file, batch: ${batch}, seconds, cpu: cpuSeconds() - cpu };
    try {
      appendFileSync(timings, JSON.stringify(line) + '\\n');
    } catch {}
  });
}
`;
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

/** The batch entry of batch `n` (from 1) under `dir`. */
export function batchEntryPath(dir: string, n: number): string {
  return join(dir, `batch-${String(n).padStart(2, '0')}.mjs`);
}

/** What each file (path from the repository root) took, from an earlier run; empty if none. */
export function readFileSeconds(file: string): Map<string, number> {
  try {
    const saved = JSON.parse(readFileSync(file, 'utf8')) as { seconds?: Record<string, number> };
    return new Map(Object.entries(saved.seconds ?? {}).filter(([, s]) => typeof s === 'number'));
  } catch {
    return new Map();
  }
}

/** Keeps `measured` over what `file` had (files this run did not measure keep their old time). */
export function saveFileSeconds(file: string, measured: ReadonlyMap<string, number>): void {
  if (measured.size === 0) return;
  const all = readFileSeconds(file);
  for (const [f, s] of measured) all.set(f, Math.round(s * 100) / 100);
  const sorted = Object.fromEntries([...all].sort(([a], [b]) => a.localeCompare(b)));
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}`;
  writeFileSync(tmp, `${JSON.stringify({ seconds: sorted }, null, 1)}\n`);
  renameSync(tmp, file); // two runs at once: the last rename wins, both files are whole
}
