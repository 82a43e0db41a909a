// Regenerates test/conformance/krusty/: the cases of kustomize's own api/krusty/*_test.go at
// sigs.k8s.io/kustomize/api@v0.21.0 (the api/ tree of kustomize/v5.8.0), as an oracle for
// Mooring's engine.
//
// Usage: node --import tsx hack/gen-krusty-cases.ts [--force]
//
// 1. `go mod download` the module (read-only in GOMODCACHE) and copy it to
//    .mooring/krusty-dump/api/ (gitignored).
// 2. Instrument the copy: krusty.Kustomizer.Run is renamed and wrapped by
//    hack/krusty-dump/mooring_dump.go, which writes, for every Run call a test makes, the whole
//    file system of the call, the options and what Run returned (output or error); the kusttest
//    harness tells it the running test's name and records each AssertActualEqualsExpected*.
// 3. `go test -json ./krusty/` runs them all (niced, one package at a time), dumping into
//    .mooring/krusty-dump/raw/. Steps 1-3 are skipped while the stamp (module version, Go version,
//    mooring_dump.go and the patches below) matches; --force reruns them.
// 4. Each dumped call becomes test/conformance/krusty/cases/<file>/<case>/ with input/, case.json and
//    expected.yaml or expected-error.txt (see test/conformance/krusty/README.md). Cases that need
//    plugins, Helm or remote URLs, or whose Go test did not pass, are kept but marked excluded.
// 5. Every case is built by bin/kustomize on disk with the flags equal to its options
//    (`--reorder none` for the harness default) and, where the options reorder differently, once
//    more with the CLI's default order (legacy): case.json records whether the binary agrees with
//    the dump, and expected-cli.yaml holds the CLI-default output where it differs from
//    expected.yaml.
import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createWriteStream, existsSync } from 'node:fs';
import { chmod, cp, mkdir, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import {
  CASES_DIR,
  type CaseOptions,
  type CaseRecord,
  caseNeeds,
  KRUSTY_MODULE,
  type KrustyIndex,
} from '../test/conformance/krusty-cases.ts';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../', import.meta.url));
const KUSTOMIZE = join(ROOT, 'bin/kustomize');
// kustomize's test harness runs Helm as `helmV3` from PATH (types.EnabledPluginConfig); the dump
// links it to the reference helm v3.22.0, so the Helm tests that need no network run.
const HELM = join(ROOT, 'bin/helm');
const HELM_PATH_DIR = join(ROOT, '.mooring/krusty-helm-bin');
const WORK = join(ROOT, '.mooring/krusty-dump');
const SRC = join(WORK, 'api');
const RAW = join(WORK, 'raw');
const GO_JSON = join(WORK, 'go-test.json');
const STAMP = join(WORK, 'stamp');
const DUMP_GO = join(ROOT, 'hack/krusty-dump/mooring_dump.go');
const MANAGED_BY_VALUE = 'kustomize-v5.8.0';

/** Exact-text edits of the module copy: [file, old, new]; each old text must occur exactly once. */
const PATCHES: [string, string, string][] = [
  ['krusty/kustomizer.go', 'func (b *Kustomizer) Run(\n', 'func (b *Kustomizer) mooringRun(\n'],
  [
    'testutils/kusttest/harness.go',
    '\tt.Helper()\n\treturn Harness{',
    '\tt.Helper()\n\tkrusty.MooringSetTestName(t.Name())\n\treturn Harness{',
  ],
  [
    'testutils/kusttest/harness.go',
    '\tm, err := krusty.MakeKustomizer(&o).Run(th.fSys, path)',
    '\tkrusty.MooringSetTestName(th.t.Name())\n\tm, err := krusty.MakeKustomizer(&o).Run(th.fSys, path)',
  ],
  [
    'testutils/kusttest/harness.go',
    '\t_, err := krusty.MakeKustomizer(&o).Run(th.fSys, path)',
    '\tkrusty.MooringSetTestName(th.t.Name())\n\t_, err := krusty.MakeKustomizer(&o).Run(th.fSys, path)',
  ],
  [
    'testutils/kusttest/hasgett.go',
    '\t"sigs.k8s.io/kustomize/api/resmap"\n',
    '\t"sigs.k8s.io/kustomize/api/krusty"\n\t"sigs.k8s.io/kustomize/api/resmap"\n',
  ],
  [
    'testutils/kusttest/hasgett.go',
    '\tif string(actual) != expected {\n\t\treportDiffAndFail',
    '\tkrusty.MooringNoteAssert(m, tweaker != nil, string(actual) == expected)\n\tif string(actual) != expected {\n\t\treportDiffAndFail',
  ],
  // Builtins load statically linked, as in the CLI: the harness would compile them as Go
  // plugins from the kustomize repository's plugin/ tree, which the api module does not ship.
  // A test that needs a non-builtin plugin still fails (its plugin root does not exist).
  [
    'testutils/kusttest/harness.go',
    'types.EnabledPluginConfig(types.BploLoadFromFileSys)',
    'types.EnabledPluginConfig(types.BploUseStaticallyLinked)',
  ],
  [
    'testutils/kusttest/plugintestenv.go',
    '\tif err != nil {\n\t\tx.t.Error(err)\n\t}\n\tx.compiler',
    '\tif err != nil {\n\t\tx.pluginRoot = "/nonexistent/kustomize/plugin"\n\t}\n\tx.compiler',
  ],
  [
    'testutils/kusttest/plugintestenv.go',
    '\tx.compiler.SetGVK(g, v, k)\n',
    '\tif g == konfig.BuiltinPluginPackage {\n\t\treturn\n\t}\n\tx.compiler.SetGVK(g, v, k)\n',
  ],
  // WriteLegacyConfigs concatenates a map's values: in sorted key order here, so the file is
  // the same on every run.
  [
    'testutils/kusttest/harness.go',
    'import (\n\t"path/filepath"',
    'import (\n\t"maps"\n\t"path/filepath"\n\t"slices"',
  ],
  [
    'testutils/kusttest/harness.go',
    '\tfor _, tCfg := range m {\n',
    '\tfor _, key := range slices.Sorted(maps.Keys(m)) {\n\t\ttCfg := m[key]\n',
  ],
];

/** The Makefile's test flags: managedbylabel_test.go expects the version `(test)`. */
const LDFLAGS = '-X sigs.k8s.io/kustomize/api/provenance.version=(test)';

const goEnv = (): NodeJS.ProcessEnv => ({
  ...process.env,
  GOTOOLCHAIN: 'local',
  GOFLAGS: '-buildvcs=false -p=1',
  GOWORK: 'off',
});

/** The caller's Go caches, named explicitly: the tests run with another HOME. */
async function goCaches(): Promise<NodeJS.ProcessEnv> {
  const { stdout } = await run('go', ['env', 'GOCACHE', 'GOMODCACHE', 'GOPATH'], { env: goEnv() });
  const [GOCACHE, GOMODCACHE, GOPATH] = stdout.trim().split('\n');
  return { GOCACHE, GOMODCACHE, GOPATH };
}

async function moduleDir(): Promise<string> {
  const { stdout } = await run('go', ['mod', 'download', '-json', KRUSTY_MODULE], {
    env: goEnv(),
    maxBuffer: 1 << 20,
  });
  const dir = (JSON.parse(stdout) as { Dir?: string }).Dir;
  if (!dir) throw new Error(`go mod download ${KRUSTY_MODULE} gave no directory:\n${stdout}`);
  return dir;
}

async function stampText(): Promise<string> {
  const { stdout: goVersion } = await run('go', ['env', 'GOVERSION'], { env: goEnv() });
  const h = createHash('sha256');
  h.update(KRUSTY_MODULE);
  h.update(goVersion);
  h.update(await readFile(DUMP_GO));
  h.update(JSON.stringify(PATCHES));
  h.update(LDFLAGS);
  h.update(`helmV3 -> ${HELM}`);
  return h.digest('hex').slice(0, 16);
}

/** Steps 1-3: copy, instrument and run the module's krusty tests; a no-op while the stamp matches. */
async function dumpWithGo(force: boolean): Promise<void> {
  const stamp = await stampText();
  if (!force && existsSync(STAMP) && (await readFile(STAMP, 'utf8')) === stamp && existsSync(GO_JSON)) {
    console.log(`gen-krusty-cases: the Go dump in ${relative(ROOT, WORK)} is up to date`);
    return;
  }
  const dir = await moduleDir();
  await rm(WORK, { recursive: true, force: true });
  await mkdir(WORK, { recursive: true });
  await cp(dir, SRC, { recursive: true });
  await chmodTree(SRC);
  for (const [file, from, to] of PATCHES) {
    const path = join(SRC, file);
    const text = await readFile(path, 'utf8');
    const count = text.split(from).length - 1;
    if (count !== 1) throw new Error(`patch of ${file} expects its text once, found it ${count} times`);
    await writeFile(path, text.replace(from, to));
  }
  await cp(DUMP_GO, join(SRC, 'krusty/mooring_dump.go'));
  await mkdir(RAW, { recursive: true });
  await run('bash', [join(ROOT, 'hack/lib/build-helm.sh'), 'helm'], { cwd: ROOT });
  await rm(HELM_PATH_DIR, { recursive: true, force: true });
  await mkdir(HELM_PATH_DIR, { recursive: true });
  await symlink(HELM, join(HELM_PATH_DIR, 'helmV3'));
  const caches = await goCaches();
  console.log('gen-krusty-cases: go test ./krusty/ (a cold run compiles for a few minutes)');
  const started = Date.now();
  const out = createWriteStream(GO_JSON);
  const code = await new Promise<number>((resolve, reject) => {
    const child = spawn(
      'nice',
      ['-n', '10', 'go', 'test', '-json', '-count=1', '-timeout=40m', `-ldflags=${LDFLAGS}`, './krusty/'],
      {
        cwd: SRC,
        // HOME elsewhere: no kustomize plugin or config of the caller's may take part.
        env: {
          ...goEnv(),
          ...caches,
          MOORING_KRUSTY_DUMP: RAW,
          PATH: `${HELM_PATH_DIR}:${process.env.PATH ?? ''}`,
          HOME: join(WORK, 'home'),
          XDG_CONFIG_HOME: '',
        },
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    child.stdout.pipe(out);
    child.on('error', reject);
    child.on('close', (c) => resolve(c ?? 1));
  });
  await new Promise<void>((resolve) => out.end(resolve));
  // Some tests fail here (no plugin sources, no helm, no network): that is recorded per case.
  console.log(`gen-krusty-cases: go test exited ${code} after ${Math.round((Date.now() - started) / 1000)}s`);
  await writeFile(STAMP, stamp);
}

async function chmodTree(dir: string): Promise<void> {
  await chmod(dir, 0o755);
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) await chmodTree(p);
    else if (e.isFile()) await chmod(p, 0o644);
  }
}

/** Test name → result (pass | fail | skip) and the first line it logged with "skipping", from `go test -json`. */
async function goResults(): Promise<Map<string, { result: string; skip?: string }>> {
  const results = new Map<string, { result: string; skip?: string }>();
  const skips = new Map<string, string>();
  for (const line of (await readFile(GO_JSON, 'utf8')).split('\n')) {
    if (!line.startsWith('{')) continue;
    const ev = JSON.parse(line) as { Action?: string; Test?: string; Output?: string };
    if (!ev.Test) continue;
    if (ev.Action === 'output' && /skipping/i.test(ev.Output ?? '') && !skips.has(ev.Test))
      skips.set(ev.Test, ev.Output!.trim());
    if (ev.Action === 'pass' || ev.Action === 'fail' || ev.Action === 'skip')
      results.set(ev.Test, {
        result: ev.Action,
        ...(skips.has(ev.Test) ? { skip: skips.get(ev.Test) } : {}),
      });
  }
  return results;
}

/** Test function name → the krusty test file that defines it. */
async function testFiles(): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  const dir = join(SRC, 'krusty');
  for (const f of (await readdir(dir)).filter((n) => n.endsWith('_test.go')).sort())
    for (const m of (await readFile(join(dir, f), 'utf8')).matchAll(/^func (Test\w+)\(/gm))
      files.set(m[1]!, f);
  return files;
}

interface RawMeta {
  file: string;
  test: string;
  testFunc: string;
  seq: number;
  path: string;
  entry: string;
  fs: 'memory' | 'disk';
  fsRoot: string;
  reorder: string;
  addManagedbyLabel: boolean;
  loadRestrictions: string;
  plugins: CaseOptions['plugins'];
  error: boolean;
}

const sanitize = (s: string): string => s.replace(/[^A-Za-z0-9_.-]+/g, '_');

/** Normalises a Go error text: no temp directory or pointer that changes from run to run. */
function normaliseError(text: string, meta: RawMeta): string {
  let t = text;
  if (meta.fs === 'disk' && meta.fsRoot) t = t.split(meta.fsRoot).join('<root>');
  return t.replace(/0x[0-9a-f]{6,}/g, '0x…').replace(/kust-testing-\d+|kustomize-\d{6,}/g, '<tmp>');
}

/**
 * What changes from run to run in the remote-loader cases: `/tmp/TestName123456789/001` →
 * `/tmp/TestName/001` (t.TempDir() adds random digits), the port of a test's local HTTP server, and
 * filesys.NewTmpConfirmedDir()'s `/tmp/kustomize-<digits>/` in absolute paths (the cases that name
 * one expect an error either way; the binary check confirms it).
 */
const stableTmp = (text: string): string =>
  text
    .replace(/\/tmp\/(Test\w*?)\d{6,}\//g, '/tmp/$1/')
    .replace(/\b127\.0\.0\.1:\d+/g, '127.0.0.1:PORT')
    .replace(/\/tmp\/kustomize-\d+\//g, '/tmp/kustomize-0/');

/** The flags that make `kustomize build` use a case's options; `order: false` leaves --reorder out. */
function cliFlags(o: CaseOptions, order: boolean): string[] {
  const flags: string[] = [];
  if (order && o.reorder !== 'unspecified') flags.push('--reorder', o.reorder);
  if (o.loadRestrictions === 'LoadRestrictionsNone') flags.push('--load-restrictor', 'LoadRestrictionsNone');
  if (o.addManagedbyLabel) flags.push('--enable-managedby-label');
  if (o.plugins.pluginRestrictions === 'PluginRestrictionsNone') flags.push('--enable-alpha-plugins');
  if (o.plugins.fnExec) flags.push('--enable-exec');
  if (o.plugins.fnNetwork) flags.push('--network');
  if (o.plugins.helmEnabled) flags.push('--enable-helm', '--helm-command', HELM);
  return flags;
}

type BinResult = { ok: true; out: string } | { ok: false; err: string };

async function kustomizeBuild(caseDir: string, entry: string, flags: string[]): Promise<BinResult> {
  try {
    const { stdout } = await run(KUSTOMIZE, ['build', ...flags, join('input', entry)], {
      cwd: caseDir,
      maxBuffer: 64 * 1024 * 1024,
      timeout: 60_000,
      env: { PATH: process.env.PATH ?? '', HOME: tmpdir() },
    });
    return { ok: true, out: stdout };
  } catch (err) {
    return { ok: false, err: (err as { stderr?: string }).stderr ?? String(err) };
  }
}

async function mapLimit<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < items.length; i = next++) results[i] = await fn(items[i]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

async function listTree(dir: string, base = dir): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await listTree(p, base)));
    else out.push(relative(base, p));
  }
  return out;
}

/** Directories under `dir` (itself included, as `.`) with nothing in them: git keeps no empty directory. */
async function emptyDirsOf(dir: string, base = dir): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  if (entries.length === 0) return [relative(base, dir) || '.'];
  const out: string[] = [];
  for (const e of entries) if (e.isDirectory()) out.push(...(await emptyDirsOf(join(dir, e.name), base)));
  return out;
}

async function main(): Promise<number> {
  const force = process.argv.includes('--force');
  await run('bash', [join(ROOT, 'hack/build-tools.sh'), 'kustomize'], { cwd: ROOT });
  await dumpWithGo(force);
  const results = await goResults();
  const seqs = (await readdir(RAW))
    .map(Number)
    .filter((n) => Number.isInteger(n))
    .sort((a, b) => a - b);
  const metas: RawMeta[] = [];
  for (const seq of seqs) {
    const metaFile = join(RAW, String(seq), 'meta.json');
    if (!existsSync(metaFile)) continue; // a dump that failed half-way (reported on stderr)
    metas.push(JSON.parse(await readFile(metaFile, 'utf8')) as RawMeta);
  }
  // Case ids: <file stem>/<test name>, with -<k> when one test made several Run calls.
  const perTest = new Map<string, number>();
  for (const m of metas) perTest.set(`${m.file}|${m.test}`, (perTest.get(`${m.file}|${m.test}`) ?? 0) + 1);
  const seen = new Map<string, number>();
  // Only cases/ is generated; README.md, known-gaps.* and biome.json beside it are kept.
  await rm(CASES_DIR, { recursive: true, force: true });
  const records: CaseRecord[] = [];
  const jobs: { rec: CaseRecord; dir: string }[] = [];
  for (const m of metas) {
    const key = `${m.file}|${m.test}`;
    const k = (seen.get(key) ?? 0) + 1;
    seen.set(key, k);
    const stem = m.file.replace(/_test\.go$/, '');
    const name = sanitize(m.test) + (perTest.get(key)! > 1 ? `-${k}` : '');
    const id = `${stem}/${name}`;
    const rawDir = join(RAW, String(m.seq));
    const dir = join(CASES_DIR, stem, name);
    await mkdir(dir, { recursive: true });
    if (existsSync(join(rawDir, 'input')))
      await cp(join(rawDir, 'input'), join(dir, 'input'), { recursive: true });
    else await mkdir(join(dir, 'input'));
    let asserted: CaseRecord['asserted'] = 'no';
    if (existsSync(join(rawDir, 'asserted.json'))) {
      const a = JSON.parse(await readFile(join(rawDir, 'asserted.json'), 'utf8')) as {
        tweaked: boolean;
        equal: boolean;
      };
      asserted = a.tweaked ? 'tweaked' : a.equal ? 'equal' : 'differs';
    }
    if (m.error) {
      const text = await readFile(join(rawDir, 'expected-error.txt'), 'utf8');
      await writeFile(join(dir, 'expected-error.txt'), stableTmp(normaliseError(text, m)));
    } else {
      // The version the tests were built with is the binary's in the managed-by label.
      const text = await readFile(join(rawDir, 'expected.yaml'), 'utf8');
      await writeFile(
        join(dir, 'expected.yaml'),
        stableTmp(text.split('kustomize-(test)').join(MANAGED_BY_VALUE)),
      );
    }
    const options: CaseOptions = {
      reorder: m.reorder as CaseOptions['reorder'],
      addManagedbyLabel: m.addManagedbyLabel,
      loadRestrictions: m.loadRestrictions,
      plugins: m.plugins,
    };
    const goTest = (results.get(m.test) ?? results.get(m.test.split('/')[0]!))?.result ?? 'unknown';
    const files = await listTree(join(dir, 'input'));
    const texts = await Promise.all(files.map((f) => readFile(join(dir, 'input', f), 'utf8')));
    // t.TempDir() paths (in the remote loader's file:// URLs) differ on every run.
    for (const [i, f] of files.entries()) {
      const fixed = stableTmp(texts[i]!);
      if (fixed !== texts[i]) await writeFile(join(dir, 'input', f), fixed);
      texts[i] = fixed;
    }
    const needs = caseNeeds(options, m.path, files, texts);
    // Helm alone no longer excludes a case: the engine renders charts (a chart it would have to
    // download fails the Go test here, which has no network, and is excluded for that).
    const blocking = needs.filter((n) => n !== 'helm');
    let excluded: string | undefined;
    if (blocking.length > 0) excluded = blocking[0];
    else if (m.entry === '' || m.fsRoot === '') excluded = 'outside-fs';
    else if (goTest !== 'pass') excluded = `go-test-${goTest}`;
    const emptyDirs = await emptyDirsOf(join(dir, 'input'));
    const rec: CaseRecord = {
      id,
      file: m.file,
      test: m.test,
      goTest,
      entry: m.entry || '.',
      fs: m.fs,
      options,
      expects: m.error ? 'error' : 'output',
      asserted,
      needs,
      ...(emptyDirs.length > 0 ? { emptyDirs } : {}),
      ...(excluded ? { excluded } : {}),
      binary: 'unchecked',
    };
    records.push(rec);
    jobs.push({ rec, dir });
  }
  // Step 5: the binary on disk, two at a time (2 cores).
  await mapLimit(jobs, 2, async ({ rec, dir }) => {
    if (rec.entry === '.' && rec.excluded === 'outside-fs') return;
    const got = await kustomizeBuild(dir, rec.entry, cliFlags(rec.options, true));
    if (rec.expects === 'error') rec.binary = got.ok ? 'differs' : 'agrees';
    else {
      const want = await readFile(join(dir, 'expected.yaml'), 'utf8');
      rec.binary = got.ok ? (got.out === want ? 'agrees' : 'differs') : 'errors';
    }
    if (rec.options.reorder === 'none') {
      const cli = await kustomizeBuild(dir, rec.entry, cliFlags(rec.options, false));
      const same = got.ok && cli.ok ? got.out === cli.out : !got.ok && !cli.ok;
      if (!same) {
        rec.cliDefault = cli.ok ? 'output' : 'error';
        if (cli.ok) await writeFile(join(dir, 'expected-cli.yaml'), cli.out);
        else await writeFile(join(dir, 'expected-cli-error.txt'), cli.err.split(dir).join('<case>'));
      }
    }
    if (rec.binary !== 'agrees' && rec.excluded === undefined) rec.excluded = 'binary-disagrees';
    await writeFile(join(dir, 'case.json'), `${JSON.stringify(rec, null, 2)}\n`);
  });
  for (const { rec, dir } of jobs)
    if (!existsSync(join(dir, 'case.json')))
      await writeFile(join(dir, 'case.json'), `${JSON.stringify(rec, null, 2)}\n`);
  // Top-level tests that made no build: skipped ones (Helm not installed) and tests of other APIs.
  const withCases = new Set(records.map((r) => r.test.split('/')[0]!));
  const defined = await testFiles();
  const testsWithoutCases = [...results]
    .filter(([t]) => !t.includes('/') && !withCases.has(t))
    .map(([test, r]) => ({
      test,
      file: defined.get(test) ?? '',
      result: r.result,
      ...(r.skip ? { skip: r.skip } : {}),
      ...(/helm/i.test(r.skip ?? '') || /helm/i.test(defined.get(test) ?? '')
        ? { needs: 'helm' as const }
        : /plugin|Fn[A-Z]/.test(`${defined.get(test)} ${test}`)
          ? { needs: 'plugins' as const }
          : {}),
    }))
    .sort((a, b) => a.file.localeCompare(b.file) || a.test.localeCompare(b.test));
  const index: KrustyIndex = {
    module: KRUSTY_MODULE,
    testFiles: new Set(defined.values()).size,
    tests: [...results.keys()].filter((t) => !t.includes('/')).length,
    testsWithoutCases,
    // Defined but never run: behind a build tag (chartinflatorplugin_test.go: `notravis`, Helm).
    testsNotRun: [...defined]
      .filter(([t]) => !results.has(t))
      .map(([test, file]) => ({ test, file }))
      .sort((a, b) => a.file.localeCompare(b.file) || a.test.localeCompare(b.test)),
    cases: [...records]
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
      .map((r) => ({
        id: r.id,
        file: r.file,
        expects: r.expects,
        ...(r.excluded ? { excluded: r.excluded } : {}),
        binary: r.binary,
      })),
  };
  await writeFile(join(CASES_DIR, 'index.json'), `${JSON.stringify(index, null, 2)}\n`);
  const scored = records.filter((r) => !r.excluded);
  const count = (f: (r: CaseRecord) => boolean): number => records.filter(f).length;
  console.log(
    `gen-krusty-cases: ${records.length} cases from ${new Set(records.map((r) => r.file)).size} test files, ` +
      `${scored.length} scored; bin/kustomize agrees on ${count((r) => r.binary === 'agrees')}, ` +
      `on ${scored.filter((r) => r.binary === 'agrees').length} of the scored`,
  );
  let bytes = 0;
  for (const f of await listTree(CASES_DIR)) bytes += (await stat(join(CASES_DIR, f))).size;
  console.log(`gen-krusty-cases: ${(bytes / 1e6).toFixed(1)} MB under ${relative(ROOT, CASES_DIR)}`);
  return 0;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exitCode = await main();
