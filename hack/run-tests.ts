// Runs the *.test.ts files with node's test runner. Node 20 has no glob for --test, so the files are
// listed here. hack/lib/test-files.ts tells from each file's imports which kind it is: unit (the
// code under test runs in the test's own process), integration (starts real servers or tools, no
// cluster) or cluster.
//
//   run-tests [<word> | <file>]...  every test file, or those whose path contains a word, or the files named
//   --unit                          only the unit files: no control plane, no servers or tools (see below)
//   --integration                   only the integration files (with --unit: both); no control plane
//   --coverage                      under c8; prints lines, branches and functions per package, writes
//                                   lcov.info and coverage-summary.json to --coverage-dir (.mooring/coverage)
//   --list                          print each file's kind, with the imports that make it so
//   --no-bundle                     with --unit or --integration, run the .ts files through tsx, not as bundles
//   --no-batch                      with --unit, a process for each unit file, not several to a process
//   --concurrency <n>  --keep       processes at once (4 without a cluster, else 2); leave the run's plane up
//
// Without --unit or --integration, and unless KUBECONFIG names a cluster already, one control
// plane is started for the whole run when any of its files needs one (in its own directory, so the
// demo's cluster is never touched) and stopped after it. With either, KUBECONFIG is unset and
// hack/lib/unit-guard.mjs is loaded into every Node process of the run, so a test that tries to
// start etcd or kube-apiserver anyway (or, in a --unit run, sshd, docker-registry, helm, ...) fails
// with the reason; each file runs as one esbuild bundle on plain Node (hack/lib/unit-bundles.ts
// says why and what that keeps the same), and the unit files run several to a process, one after
// another, each as a suite named by its file (hack/lib/unit-batches.ts), save those in RUN_ALONE.
import { spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { ControlPlaneLocation } from './lib/control-plane.ts';
import { findTestFiles, RUN_ALONE, TestClassifier, type TestKind } from './lib/test-files.ts';
import {
  batchEntryPath,
  planBatches,
  readFileSeconds,
  saveFileSeconds,
  writeBatchEntry,
} from './lib/unit-batches.ts';

// hack/lib/control-plane.ts (through @mooring/runtime) takes seconds to load on a busy machine; a
// run that needs no control plane never loads it.
const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

const started = Date.now();
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    concurrency: { type: 'string' },
    keep: { type: 'boolean', default: false },
    unit: { type: 'boolean', default: false },
    integration: { type: 'boolean', default: false },
    coverage: { type: 'boolean', default: false },
    'coverage-dir': { type: 'string', default: '.mooring/coverage' },
    list: { type: 'boolean', default: false },
    'no-bundle': { type: 'boolean', default: false },
    'no-batch': { type: 'boolean', default: false },
  },
});
const concurrency = Number(values.concurrency ?? '0');
if (values.concurrency !== undefined && !(Number.isInteger(concurrency) && concurrency > 0)) {
  console.error(`run-tests: --concurrency must be a whole number above 0, not ${values.concurrency}`);
  process.exit(2);
}

// A positional that names an existing file runs that file; any other narrows the run to the files
// whose path contains it.
const named = positionals.filter((p) => p.endsWith('.ts') && existsSync(p) && statSync(p).isFile());
const words = positionals.filter((p) => !named.includes(p));
let files = words.length || !named.length ? findTestFiles(repoRoot) : [];
if (words.length) files = files.filter((f) => words.some((w) => relative(repoRoot, f).includes(w)));
files = [...new Set([...files, ...named.map((p) => resolve(p))])].sort();

const classifier = new TestClassifier(repoRoot, { cacheFile: join(repoRoot, '.mooring/test-imports.json') });
const verdicts = new Map(files.map((f) => [f, classifier.classify(f)]));
classifier.saveCache();
const kindOf = (f: string): TestKind => verdicts.get(f)?.kind ?? 'unit';
const needsCluster = (f: string): boolean => kindOf(f) === 'cluster';
const testFiles = (n: number): string => `${n} test file${n === 1 ? '' : 's'}`;
const show = (f: string): string => relative(repoRoot, f);
/** "120 unit, 40 integration, 84 cluster", leaving out the kinds with no file. */
const kinds = (list: string[]): string =>
  (['unit', 'integration', 'cluster'] as const)
    .map((k) => [k, list.filter((f) => kindOf(f) === k).length] as const)
    .filter(([, n]) => n > 0)
    .map(([k, n]) => `${n} ${k}`)
    .join(', ');

if (values.list) {
  for (const f of files) {
    const v = verdicts.get(f);
    const alone = kindOf(f) === 'unit' && RUN_ALONE[show(f)];
    console.log(
      `${kindOf(f).padEnd(11)} ${show(f)}${v?.via.length ? `  (${v.via.join(' → ')})` : ''}` +
        (alone ? `  (runs alone: ${alone})` : ''),
    );
  }
  console.log(
    `${kinds(files)}: unit runs in the test's own process; integration starts real servers or tools, no cluster`,
  );
  process.exit(0);
}

// --unit and --integration each pick a kind; neither runs every file.
const picked = new Set<TestKind>();
if (values.unit) picked.add('unit');
if (values.integration) picked.add('integration');
const noCluster = picked.size > 0;
const left = noCluster ? files.filter((f) => !picked.has(kindOf(f))) : [];
if (noCluster) files = files.filter((f) => picked.has(kindOf(f)));
if (files.length === 0) {
  console.error(`run-tests: no test files matched${left.length ? ` (${kinds(left)} left out)` : ''}`);
  process.exit(1);
}

/**
 * Two runs side by side (two terminals, or helpers) share the test planes; the one that finishes
 * first must not stop a plane the other still uses. Each run registers its pid beside the plane
 * and only the last one alive stops it.
 */
function register(location: ControlPlaneLocation): void {
  mkdirSync(`${location.dir}.users`, { recursive: true });
  writeFileSync(`${location.dir}.users/${process.pid}`, '');
}

function lastUser(location: ControlPlaneLocation): boolean {
  const users = `${location.dir}.users`;
  rmSync(`${users}/${process.pid}`, { force: true });
  const alive = (pid: number): boolean => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  return readdirSync(users).every((pid) => !alive(Number(pid)));
}

const env = { ...process.env };
// A test process, or an operator process a test starts, that loads @kubernetes/client-node (only
// for an auth provider, shared/runtime/src/client-node.ts, or to test the library itself) loads it
// from one pre-bundled file rather than its ~2,500 modules (hack/lib/kube-client-bundle.ts).
env.MOORING_KUBE_CLIENT_BUNDLE ??= await (await import('./lib/kube-client-bundle.ts')).ensureKubeClientBundle(
  repoRoot,
);
// Set when this runner is itself started from a test (hack/run-tests.test.ts); node --test would
// then run nothing.
delete env.NODE_TEST_CONTEXT;
const usesPlane = !noCluster && files.some(needsCluster);
const ownCluster = usesPlane && !env.KUBECONFIG;
const plane = usesPlane
  ? { ...(await import('./lib/control-plane.ts')), ...(await import('./lib/test-location.ts')) }
  : undefined;
if (noCluster) {
  // Nothing in a run without a cluster may reach one, not even one the caller's shell points at.
  delete env.KUBECONFIG;
  // A unit run starts no servers or tools either (hack/lib/unit-guard.mjs).
  if (!picked.has('integration')) env.MOORING_UNIT_GUARD_TOOLS = '1';
  // The quick pass: a tenth of each fuzz property's runs and 20 simulation seeds (npm test runs
  // them all; npm run simulate and MOORING_FUZZ_RUNS go further). Set either to choose yourself.
  env.MOORING_FUZZ_SCALE ??= '0.1';
  env.MOORING_SIM_SEEDS ??= '20';
  const guard = pathToFileURL(join(repoRoot, 'hack/lib/unit-guard.mjs')).href;
  env.NODE_OPTIONS = [env.NODE_OPTIONS, `--import=${guard}`].filter(Boolean).join(' ');
  console.error(
    `run-tests: ${testFiles(files.length)} (${kinds(files)}), no cluster` +
      (left.length ? `; left to npm test: ${kinds(left)}` : ''),
  );
} else {
  if (plane) {
    register(plane.testLocation());
    register(plane.workloadsTestLocation());
  }
  if (plane && ownCluster) {
    const t0 = Date.now();
    const running = await plane.up(plane.testLocation(), (l) => console.error(`control-plane: ${l}`));
    console.error(
      `run-tests: control plane ready in ${((Date.now() - t0) / 1000).toFixed(1)}s at ${running.server}`,
    );
    env.KUBECONFIG = running.kubeconfig;
  }
  console.error(`run-tests: ${testFiles(files.length)} (${kinds(files)})`);
}

const coverageDir = resolve(repoRoot, values['coverage-dir']);
const coverageTmp = join(tmpdir(), `mooring-coverage-${process.pid}`);
const bundled = noCluster && !values['no-bundle'];
let bundleDir: string | undefined;
let runFileOf = (f: string): string => show(f);
if (noCluster) {
  mkdirSync(join(repoRoot, '.mooring/unit-bundles'), { recursive: true });
  bundleDir = mkdtempSync(join(repoRoot, '.mooring/unit-bundles/run-'));
}
if (bundled && bundleDir) {
  const t0 = Date.now();
  const { bundleTestFiles } = await import('./lib/unit-bundles.ts');
  const bundles = await bundleTestFiles(repoRoot, files, bundleDir, env.MOORING_KUBE_CLIENT_BUNDLE!);
  runFileOf = (f) => show(bundles.get(f)!);
  console.error(
    `run-tests: bundled in ${((Date.now() - t0) / 1000).toFixed(1)}s (--no-bundle runs them through tsx)`,
  );
}
/** What node --test runs as one file: a test file, or a batch of them (`batch` counts from 1). */
interface Process {
  run: string;
  files: string[];
  batch?: number;
}
let processes: Process[] = files.map((f) => ({ run: runFileOf(f), files: [f] }));
// What each unit file took last time, to balance the batches; a batched run keeps what it measured.
const secondsFile = join(repoRoot, '.mooring/unit-timings.json');
// A fresh clone has measured nothing yet: hack/lib/unit-timings.json is one run's times, kept in
// Git so its first run's batches are balanced too (a first run without them took 64 s, not 38).
const lastSeconds = (): Map<string, number> => {
  const measured = readFileSeconds(secondsFile);
  return measured.size > 0 ? measured : readFileSeconds(join(repoRoot, 'hack/lib/unit-timings.json'));
};
const batches = noCluster && !values['no-batch'];
if (batches && bundleDir) {
  const together = files.filter((f) => kindOf(f) === 'unit' && !RUN_ALONE[show(f)]);
  const sourceOf = new Map(together.map((f) => [show(f), f]));
  // Two batches for each process slot: node --test starts the next batch as one ends, so a batch
  // whose files take longer than last time holds up less of the run than one slot's worth would.
  const planned = planBatches(together.map(show), 2 * (concurrency || 4), lastSeconds()).map((names, i) => {
    const run = show(batchEntryPath(join(bundleDir!, 'batches'), i + 1));
    const members = names.map((n) => sourceOf.get(n)!);
    writeBatchEntry(
      resolve(repoRoot, run),
      i + 1,
      members.map((f) => ({ name: show(f), url: pathToFileURL(resolve(repoRoot, runFileOf(f))).href })),
    );
    return { run, files: members, batch: i + 1 };
  });
  const alone = processes.filter((p) => !together.includes(p.files[0]!));
  processes = [...planned, ...alone];
  if (planned.length)
    console.error(
      `run-tests: ${together.length} unit files in ${planned.length} batches, ${alone.length} in a process ` +
        'of their own (RUN_ALONE in hack/lib/test-files.ts, integration files); --no-batch: one each',
    );
}
// Each file's process appends how long it lived (hack/lib/file-timer.mjs); the summary names the
// slowest, since node 20's reporters time tests but not files.
const timings = join(mkdtempSync(join(tmpdir(), 'mooring-test-timings-')), 'timings.jsonl');
env.MOORING_TEST_TIMINGS = timings;
const nodeArgs = [
  ...(bundled ? ['--enable-source-maps'] : ['--import', 'tsx']),
  `--import=${pathToFileURL(join(repoRoot, 'hack/lib/file-timer.mjs')).href}`,
  // A test file renders a few Helm charts: tiering the 80 MB renderer module up with V8's
  // optimising compiler costs more CPU than it saves (the Helm test files: half the CPU without).
  // Only speed differs, as in the CLI (cli/src/main.ts), which sets the same flag. Unit files
  // load no renderer, and any V8 flag costs each process 25 ms (Node's built-in code cache no
  // longer matches): 5 s of CPU over a unit run.
  ...(picked.has('integration') || !noCluster ? ['--liftoff-only'] : []),
  '--test',
  '--test-reporter=spec',
  // A run without a cluster spends much of each file waiting (timers, child processes, sockets):
  // 4 processes at once keep 2 cores busy (unit run with coverage, idle machine: 64 s, against
  // 96 s at 2). Files that share a control plane load it and its API server's CPU, so 2 there.
  `--test-concurrency=${concurrency || (noCluster ? 4 : 2)}`,
  ...processes.map((p) => p.run),
];
const command = values.coverage
  ? [
      createRequire(import.meta.url).resolve('c8/bin/c8.js'),
      '--reporter=json-summary',
      '--reporter=lcovonly',
      `--report-dir=${coverageDir}`,
      // The run's own: c8 empties its temp directory first and reads all of it at the end, so two
      // runs at once (two helpers, or run-tests.test.ts inside a run) would mix their coverage.
      `--temp-directory=${coverageTmp}`,
      // The product code; tests, fixtures, benchmarks and hack/ are not what coverage is about.
      // --all counts a file that no test loaded as uncovered, rather than leaving it out.
      '--all',
      // A bundle's coverage is mapped back to the .ts files through its source map, and only then
      // is it known whether a line belongs to the product code.
      ...(bundled ? ['--exclude-after-remap'] : []),
      '--include=shared/*/src/**',
      '--include=operators/*/src/**',
      '--include=cli/src/**',
      '--exclude=**/*.test.ts',
      '--exclude=**/testdata/**',
      process.execPath,
      ...nodeArgs,
    ]
  : nodeArgs;
const child = spawn(process.execPath, command, { cwd: repoRoot, env, stdio: 'inherit' });
const code: number = await new Promise((resolve) =>
  child.on('exit', (c, signal) => resolve(c ?? (signal ? 1 : 0))),
);
if (plane) {
  const loc = plane.testLocation();
  if (lastUser(loc) && ownCluster && !values.keep) await plane.down(loc);
  // Test files that need workloads start their own plane on first use; it goes with the run.
  const workloads = plane.workloadsTestLocation();
  if (lastUser(workloads) && !values.keep) await plane.down(workloads);
}
if (bundleDir) rmSync(bundleDir, { recursive: true, force: true });
printSlowest(timings, 15);
rmSync(dirname(timings), { recursive: true, force: true });
if (code !== 0 && processes.some((p) => p.batch))
  console.error(
    'run-tests: the unit files ran several to a process; a file that fails only so leaves its process ' +
      'changed or needs it fresh: `--no-batch <file>` runs files alone, RUN_ALONE in hack/lib/test-files.ts keeps one so',
  );
if (values.coverage) {
  rmSync(coverageTmp, { recursive: true, force: true });
  printCoverage(join(coverageDir, 'coverage-summary.json'));
}
console.error(
  `run-tests: ${testFiles(files.length)} ${code === 0 ? 'passed' : 'FAILED'} in ${((Date.now() - started) / 1000).toFixed(1)}s`,
);
process.exit(code);

/**
 * The `count` test files that took longest, with their CPU and that of the programs they ran: a
 * file in a process of its own from its start to its exit, a file in a batch from the one before it
 * finishing to its own end (hack/lib/unit-batches.ts). Then the batches, start to exit. A batched
 * run keeps each unit file's time in .mooring/unit-timings.json, to balance the next one.
 */
function printSlowest(timingsFile: string, count: number): void {
  let lines: string[];
  try {
    lines = readFileSync(timingsFile, 'utf8').split('\n').filter(Boolean);
  } catch {
    return; // no file ran to its end
  }
  interface Row {
    name: string;
    seconds: number;
    cpu?: number;
    batch?: boolean;
  }
  const byRun = new Map(processes.map((p) => [resolve(repoRoot, p.run), p]));
  const fileRows: Row[] = [];
  const processRows: Row[] = [];
  for (const line of lines) {
    const { file, seconds, cpu, batch } = JSON.parse(line) as {
      file: string;
      seconds: number;
      cpu?: number;
      batch?: number;
    };
    if (batch !== undefined) {
      fileRows.push({ name: file, seconds, cpu }); // a batch names its files as the report does
      continue;
    }
    const p = byRun.get(resolve(repoRoot, file));
    if (p?.batch !== undefined) {
      processRows.push({ name: `batch ${p.batch}: ${p.files.length} files`, seconds, cpu, batch: true });
      continue;
    }
    const row = { name: show(p?.files[0] ?? file), seconds, cpu };
    fileRows.push(row);
    processRows.push(row);
  }
  fileRows.sort((a, b) => b.seconds - a.seconds);
  const sum = (rows: Row[], key: 'seconds' | 'cpu'): number => rows.reduce((t, r) => t + (r[key] ?? 0), 0);
  const cpu = sum(processRows, 'cpu');
  const row = (r: Row): string =>
    `${r.seconds.toFixed(1).padStart(7)}s ${`${r.cpu?.toFixed(1) ?? '?'}s CPU`.padStart(10)}  ${r.name}`;
  const batchRows = processRows.filter((r) => r.batch);
  if (batchRows.length === 0) {
    console.error(
      `\nslowest test files (process start to exit, and CPU with the programs each ran; ${fileRows.length} files, ` +
        `${sum(fileRows, 'seconds').toFixed(1)}s and ${cpu.toFixed(1)}s CPU added up)`,
    );
  } else {
    console.error(
      `\nslowest test files (each file's own time in its batch or process, and CPU with the programs it ran; ` +
        `${fileRows.length} files in ${processRows.length} processes, ${cpu.toFixed(1)}s CPU added up, ` +
        `${(cpu - sum(fileRows, 'cpu')).toFixed(1)}s of it outside the files: starting and ending the processes)`,
    );
  }
  for (const r of fileRows.slice(0, count)) console.error(row(r));
  if (batchRows.length > 0) {
    console.error(`batches, process start to exit (${batchRows.length}):`);
    for (const r of batchRows.sort((a, b) => b.seconds - a.seconds)) console.error(row(r));
    const measured = new Map(
      fileRows
        .filter((r) => !r.name.startsWith('..') && kindOf(resolve(repoRoot, r.name)) === 'unit')
        .map((r) => [r.name, r.seconds] as const),
    );
    saveFileSeconds(secondsFile, measured);
  }
}

interface Counts {
  total: number;
  covered: number;
}
type Summary = Record<string, Record<'lines' | 'branches' | 'functions', Counts>>;

/** c8's per-file summary, added up per workspace package (shared/x, operators/x, cli) and in total. */
function printCoverage(summaryFile: string): void {
  let summary: Summary;
  try {
    summary = JSON.parse(readFileSync(summaryFile, 'utf8'));
  } catch (err) {
    console.error(`run-tests: no coverage summary: ${(err as Error).message}`);
    return;
  }
  // Through a bundle's source map, c8 (v8-to-istanbul) maps lines back to each .ts file but drops
  // functions and branches of a map with many sources: only lines are true then.
  const kinds = bundled ? (['lines'] as const) : (['lines', 'branches', 'functions'] as const);
  const packages = new Map<string, Record<'lines' | 'branches' | 'functions', Counts>>();
  const add = (name: string, file: Summary[string]): void => {
    let sums = packages.get(name);
    if (!sums) {
      sums = {
        lines: { total: 0, covered: 0 },
        branches: { total: 0, covered: 0 },
        functions: { total: 0, covered: 0 },
      };
      packages.set(name, sums);
    }
    for (const k of kinds) {
      sums[k].total += file[k].total;
      sums[k].covered += file[k].covered;
    }
  };
  for (const [file, counts] of Object.entries(summary)) {
    if (file === 'total') continue;
    const parts = relative(repoRoot, file).split('/');
    add(
      parts[0] === 'shared' || parts[0] === 'operators' ? parts.slice(0, 2).join('/') : (parts[0] ?? file),
      counts,
    );
  }
  const cell = (c: Counts): string =>
    `${c.total ? ((100 * c.covered) / c.total).toFixed(1) : '100.0'}% ${c.covered}/${c.total}`.padEnd(20);
  const rows = [...packages.entries()].sort(([a], [b]) => a.localeCompare(b));
  const total = summary.total;
  console.error(
    `\ncoverage of shared/*/src, operators/*/src and cli/src (c8 --all; lcov in ${relative(repoRoot, coverageDir)}/lcov.info)`,
  );
  if (bundled)
    console.error('(lines only from bundles: branches and functions with --no-bundle, through tsx)');
  console.error(`${'package'.padEnd(28)}${kinds.map((k) => k.padEnd(20)).join('')}`);
  for (const [name, sums] of rows)
    console.error(`${name.padEnd(28)}${kinds.map((k) => cell(sums[k])).join('')}`);
  if (total) console.error(`${'total'.padEnd(28)}${kinds.map((k) => cell(total[k])).join('')}`);
}
