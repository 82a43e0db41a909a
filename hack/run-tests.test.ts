// The test runner's split into unit, integration and cluster files (hack/lib/test-files.ts), and
// what `run-tests --unit` promises: only unit files, no control plane and no servers or tools, a
// failing test fails the run, the slowest files named.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { findTestFiles, TestClassifier } from './lib/test-files.ts';
import { planBatches } from './lib/unit-batches.ts';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const scratch = mkdtempSync(join(tmpdir(), 'mooring-run-tests-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

/** Writes `files` (path → text) under a new directory and returns it. */
function tree(name: string, files: Record<string, string>): string {
  const root = join(scratch, name);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

describe('the classification of the repository’s own test files', () => {
  // The runner's cache of parsed imports, read but not written.
  const classifier = new TestClassifier(repoRoot, {
    cacheFile: join(repoRoot, '.mooring/test-imports.json'),
  });

  test('a test of pure code is a unit test', () => {
    assert.deepEqual(classifier.classify('shared/kstatus/src/pod.test.ts'), { kind: 'unit', via: [] });
    assert.equal(classifier.classify('hack/gen-operations-doc.test.ts').kind, 'unit'); // repoRoot only
  });

  test('starting a real server or tool, without a cluster, makes an integration test', () => {
    // GitServer from the harness barrel, which also exports testCluster: git http-backend, no cluster.
    assert.deepEqual(classifier.classify('cli/test/bootstrap.test.ts'), {
      kind: 'integration',
      via: ['GitServer in test/harness/git-server.ts'],
    });
    assert.equal(classifier.classify('test/harness/ssh-git-server.test.ts').kind, 'integration');
    assert.equal(classifier.classify('test/operator-image-build.test.ts').kind, 'integration');
    // The mooring command end to end, in processes of its own.
    assert.deepEqual(classifier.classify('cli/test/plan.test.ts').via, ['mooring in cli/test/run-cli.ts']);
  });

  test('a test that starts a control plane or calls testCluster needs one, and the chain says how', () => {
    const plane = classifier.classify('test/control-plane.test.ts');
    assert.equal(plane.kind, 'cluster');
    assert.match(plane.via.join(' → '), /^(up|down) in hack\/lib\/control-plane\.ts$/);
    const tenant = classifier.classify('cli/test/tenant.test.ts');
    assert.equal(tenant.kind, 'cluster');
    assert.deepEqual(tenant.via, [
      'test/harness/in-process-operators.ts',
      'testCluster in test/harness/cluster.ts',
    ]);
    // Its plane comes up through `bash hack/demo`; stopping it with down() gives it away.
    assert.equal(classifier.classify('hack/demo.test.ts').kind, 'cluster');
  });

  test('the suite splits three ways', () => {
    const verdicts = findTestFiles(repoRoot).map((f) => classifier.classify(f).kind);
    assert.ok(verdicts.filter((k) => k === 'cluster').length >= 30, 'the cluster tests');
    assert.ok(verdicts.filter((k) => k === 'integration').length >= 15, 'the integration tests');
    assert.ok(verdicts.filter((k) => k === 'unit').length >= 80, 'the unit tests');
  });
});

describe('the import graph', () => {
  const root = tree('graph', {
    'package.json': JSON.stringify({ workspaces: ['test'] }),
    'test/package.json': JSON.stringify({ name: '@x/test', exports: { './harness': './harness/index.ts' } }),
    'test/harness/cluster.ts': 'export function testCluster() {}\nexport function uniqueName() {}\n',
    'test/harness/git.ts': 'export class GitServer {}\n',
    'test/harness/ready.ts':
      "import { testCluster } from './cluster.ts';\nexport const waitForReady = () => testCluster();\n",
    'test/harness/index.ts':
      "export { testCluster, uniqueName } from './cluster.ts';\nexport { GitServer } from './git.ts';\nexport * from './ready.ts';\n",
    'lib/star.ts': "export * from '../test/harness/git.ts';\nexport * from '../test/harness/ready.ts';\n",
    'lib/fixture.ts':
      "import { testCluster as tc } from '@x/test/harness';\nexport const make = () => tc();\n",
    'lib/cycle-a.ts':
      "import { b } from './cycle-b.ts';\nimport { make } from './fixture.ts';\nexport const a = () => [b, make];\n",
    'lib/cycle-b.ts': "import { a } from './cycle-a.ts';\nexport const b = () => a;\n",
    'pure.test.ts':
      "import { GitServer, uniqueName } from '@x/test/harness';\nnew GitServer(); uniqueName();\n",
    'types-only.test.ts':
      "import type { testCluster } from './test/harness/cluster.ts';\nimport { type waitForReady } from './test/harness/index.ts';\n",
    'direct.test.ts': "import { testCluster } from './test/harness/cluster.ts';\n",
    'barrel.test.ts': "import { waitForReady } from './test/harness/index.ts';\n",
    'star-pure.test.ts': "import { GitServer } from './lib/star.ts';\n",
    'star-cluster.test.ts': "import { waitForReady } from './lib/star.ts';\n",
    'fixture.test.ts': "import { make } from './lib/fixture.ts';\n",
    'namespace.test.ts': "import * as h from './test/harness/cluster.ts';\n",
    'dynamic.test.ts': "const f = await import('./lib/fixture.ts');\n",
    'in-a-string.test.ts': "const text = `import { testCluster } from './test/harness/cluster.ts'`;\n",
    'cycle.test.ts': "import { a } from './lib/cycle-a.ts';\n",
  });
  const classifier = new TestClassifier(root, {
    entryPoints: { cluster: { 'test/harness/cluster.ts': ['testCluster'] } },
  });
  const needs = (file: string): boolean => classifier.classify(file).kind === 'cluster';

  test('names are followed through barrels and export *, to the module that defines them', () => {
    assert.equal(needs('pure.test.ts'), false);
    assert.equal(needs('star-pure.test.ts'), false);
    assert.equal(needs('barrel.test.ts'), true);
    assert.equal(needs('star-cluster.test.ts'), true);
  });

  test('a helper that calls an entry point makes every test that imports it need a cluster', () => {
    assert.deepEqual(classifier.classify('fixture.test.ts').via, [
      'lib/fixture.ts',
      'testCluster in test/harness/cluster.ts',
    ]);
    assert.equal(needs('dynamic.test.ts'), true);
    assert.equal(needs('cycle.test.ts'), true);
    // Asked again, from the other side of the cycle: the first answer was not cached as "pure".
    assert.equal(classifier.classify(join(root, 'lib/cycle-b.ts')).kind, 'cluster');
  });

  test('type-only imports and text that only looks like an import need nothing', () => {
    assert.equal(needs('types-only.test.ts'), false);
    assert.equal(needs('in-a-string.test.ts'), false);
  });

  test('direct and whole-module imports of the entry point need a cluster', () => {
    assert.equal(needs('direct.test.ts'), true);
    assert.equal(needs('namespace.test.ts'), true);
  });
});

describe('integration and cluster entry points together', () => {
  const root = tree('kinds', {
    'package.json': JSON.stringify({ workspaces: [] }),
    'harness/cluster.ts': 'export function testCluster() {}\n',
    'harness/git.ts': 'export class GitServer {}\nexport function uniqueName() {}\n',
    'harness/index.ts': "export * from './cluster.ts';\nexport * from './git.ts';\n",
    'lib/repo.ts':
      "import { GitServer } from '../harness/index.ts';\nexport const repo = () => new GitServer();\n",
    'lib/cycle-a.ts':
      "import { repo } from './repo.ts';\nimport { b } from './cycle-b.ts';\nexport const a = () => [b, repo];\n",
    'lib/cycle-b.ts':
      "import { a } from './cycle-a.ts';\nimport { testCluster } from '../harness/cluster.ts';\nexport const b = () => [a, testCluster];\n",
    'unit.test.ts': "import { uniqueName } from './harness/index.ts';\n",
    'integration.test.ts': "import { repo } from './lib/repo.ts';\n",
    'both.test.ts':
      "import { repo } from './lib/repo.ts';\nimport { testCluster } from './harness/index.ts';\n",
    'whole.test.ts': "import * as h from './harness/index.ts';\n",
    'cycle.test.ts': "import { a } from './lib/cycle-a.ts';\n",
  });
  const classifier = new TestClassifier(root, {
    entryPoints: {
      cluster: { 'harness/cluster.ts': ['testCluster'] },
      integration: { 'harness/git.ts': ['GitServer'] },
    },
  });
  const kind = (file: string) => classifier.classify(file).kind;

  test('a helper that starts a server makes an integration test, and the chain says how', () => {
    assert.equal(kind('unit.test.ts'), 'unit');
    assert.deepEqual(classifier.classify('integration.test.ts'), {
      kind: 'integration',
      via: ['lib/repo.ts', 'GitServer in harness/git.ts'],
    });
  });

  test('a file that reaches both is a cluster test, whichever it imports first', () => {
    assert.equal(kind('both.test.ts'), 'cluster');
    assert.equal(kind('whole.test.ts'), 'cluster');
    // Asked from cycle-b, cycle-a looks like integration until the cycle closes through cycle-b's
    // testCluster: that half answer must not be kept for the file that imports cycle-a.
    assert.equal(kind('lib/cycle-b.ts'), 'cluster');
    assert.equal(kind('cycle.test.ts'), 'cluster');
  });
});

interface Run {
  code: number | null;
  output: string;
}

/** Runs hack/run-tests.ts with `args`, with a KUBECONFIG a unit run must not pass on. */
function runTests(args: string[]): Promise<Run> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', join(repoRoot, 'hack/run-tests.ts'), '--concurrency', '1', ...args],
      { cwd: repoRoot, env: { ...process.env, KUBECONFIG: join(scratch, 'no-such-kubeconfig') } },
      (err, stdout, stderr) =>
        done({ code: err ? ((err.code as number | null) ?? 1) : 0, output: stdout + stderr }),
    );
  });
}

describe('run-tests --unit', () => {
  const kstatus = join(repoRoot, 'shared/kstatus/src/pod.ts');
  const dir = tree('unit-run', {
    'passes.test.ts': [
      "import assert from 'node:assert/strict';",
      "import { test } from 'node:test';",
      `import { podStatus } from '${kstatus}';`,
      "test('passes', () => assert.equal(typeof podStatus, 'function'));",
      "test('sees no KUBECONFIG', () => assert.equal(process.env.KUBECONFIG, undefined));",
      '',
    ].join('\n'),
    'fails.test.ts': [
      "import assert from 'node:assert/strict';",
      "import { test } from 'node:test';",
      "test('fails on purpose', () => assert.equal(1, 2));",
      '',
    ].join('\n'),
    'starts-etcd.test.ts': [
      "import assert from 'node:assert/strict';",
      "import { execFileSync, spawn } from 'node:child_process';",
      "import { test } from 'node:test';",
      "test('cannot start etcd', () => assert.throws(() => spawn('/nowhere/bin/etcd'), { code: 'MOORING_UNIT_RUN_NO_CLUSTER' }));",
      "test('nor sshd, nor git http-backend', () => {",
      "  assert.throws(() => spawn('/usr/sbin/sshd', ['-D']), { code: 'MOORING_UNIT_RUN_NO_TOOLS' });",
      "  assert.throws(() => spawn('git', ['http-backend']), /INTEGRATION_ENTRY_POINTS/);",
      "  assert.equal(execFileSync('git', ['--version'], { encoding: 'utf8' }).startsWith('git version'), true);",
      '});',
      "test('nor can a program it runs', () => {",
      "  const child = `require('node:child_process').spawn('kube-apiserver')`;",
      "  assert.throws(() => execFileSync(process.execPath, ['-e', child], { stdio: 'pipe' }), /a unit run starts no control plane/);",
      '});',
      '',
    ].join('\n'),
    'throws-at-load.test.ts': "throw new Error('broken while loading');\n",
    'needs-cluster.test.ts': `import { testCluster } from '${join(repoRoot, 'test/harness/index.ts')}';\nawait testCluster();\n`,
  });

  const inDir = (...names: string[]): string[] => names.map((n) => join(dir, n));

  test('a failing test fails the run; the control plane is neither started nor reachable', async () => {
    const run = await runTests([
      '--unit',
      ...inDir('passes.test.ts', 'fails.test.ts', 'starts-etcd.test.ts'),
    ]);
    assert.equal(run.code, 1, run.output);
    assert.match(run.output, /run-tests: 3 test files \(3 unit\), no cluster/);
    assert.match(run.output, /✖ fails on purpose/);
    assert.match(run.output, /ℹ pass 5\n/, run.output);
    assert.match(run.output, /ℹ fail 1\n/);
    assert.doesNotMatch(run.output, /control plane ready|control-plane:/);
  });

  test('files that need a cluster are left out, and a run of nothing else fails', async () => {
    const run = await runTests(['--unit', join(dir, 'needs-cluster.test.ts')]);
    assert.equal(run.code, 1, run.output);
    assert.match(run.output, /no test files matched \(1 cluster left out\)/);
  });

  test('a passing run exits 0 and, with --coverage, prints coverage by package', async () => {
    const coverage = join(scratch, 'coverage');
    const run = await runTests([
      '--unit',
      '--coverage',
      '--coverage-dir',
      coverage,
      join(dir, 'passes.test.ts'),
    ]);
    assert.equal(run.code, 0, run.output);
    // The file ran as a bundle: its lines are counted in the .ts files it came from.
    const kstatus = /^shared\/kstatus\s+\d+\.\d% (\d+)\/\d+/m.exec(run.output);
    assert.ok(kstatus && Number(kstatus[1]) > 0, run.output);
    assert.match(run.output, /^total\s+\d+\.\d% \d+\/\d+\s*$/m);
    // Each file's time, start to exit, and CPU, named by its .ts file rather than its bundle.
    assert.match(
      run.output,
      /slowest test files[^\n]*\n\s+\d+\.\d+s +\d+\.\d+s CPU {2}\S*passes\.test\.ts\n/,
    );
  });

  test('a failure in a batch is shown under its file, and a file that throws while loading fails as itself', async () => {
    const run = await runTests([
      '--unit',
      ...inDir('passes.test.ts', 'fails.test.ts', 'throws-at-load.test.ts'),
    ]);
    assert.equal(run.code, 1, run.output);
    assert.match(run.output, /3 unit files in 2 batches/);
    assert.match(run.output, /▶ \S*fails\.test\.ts\n\s+✖ fails on purpose/);
    assert.match(run.output, /✖ \S*throws-at-load\.test\.ts[^\n]*\n\s+Error: broken while loading/);
    assert.match(run.output, /✔ \S*passes\.test\.ts/);
    assert.match(run.output, /ℹ pass 2\n/);
    // --no-batch: a process each, as before; the same tests pass and fail.
    const alone = await runTests(['--unit', '--no-batch', ...inDir('passes.test.ts', 'fails.test.ts')]);
    assert.equal(alone.code, 1, alone.output);
    assert.doesNotMatch(alone.output, /batches/);
    assert.match(alone.output, /ℹ pass 2\n/);
    assert.match(alone.output, /ℹ fail 1\n/);
  });
});

describe('unit files several to a process', () => {
  test('balances batches by last time, longest first, the same way each run', () => {
    const seconds = new Map([
      ['a.test.ts', 10],
      ['b.test.ts', 6],
      ['c.test.ts', 5],
      ['d.test.ts', 1],
    ]);
    const files = ['d.test.ts', 'c.test.ts', 'b.test.ts', 'a.test.ts', 'new.test.ts'];
    const batches = planBatches(files, 2, seconds);
    // a 10 | b 6, then c 5 to b (11), d 1 to a (11), new (1 when unknown) to the first of two equal.
    assert.deepEqual(batches, [
      ['a.test.ts', 'd.test.ts', 'new.test.ts'],
      ['b.test.ts', 'c.test.ts'],
    ]);
    assert.deepEqual(planBatches([...files].reverse(), 2, seconds), batches);
    assert.deepEqual(planBatches(['x.test.ts'], 8, seconds), [['x.test.ts']]);
  });
});
