// Runs every *.test.ts with node's test runner. Node 20 has no glob for --test, so the files are
// listed here. Unless KUBECONFIG names a cluster already, one control plane is started for the
// whole run (in its own directory, so the demo's cluster is never touched) and stopped after it.
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import { type ControlPlaneLocation, down, repoRoot, up } from './lib/control-plane.ts';
import { testLocation, workloadsTestLocation } from './lib/test-location.ts';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    concurrency: { type: 'string', default: '2' },
    keep: { type: 'boolean', default: false },
  },
});

const SKIP_DIRS = new Set(['node_modules', '.git', 'bin', '.mooring', 'testdata']);

function findTests(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) {
      if (!SKIP_DIRS.has(entry.name)) findTests(join(dir, entry.name), out);
    } else if (entry.name.endsWith('.test.ts')) out.push(join(dir, entry.name));
  }
  return out;
}

const roots = ['shared', 'operators', 'cli', 'test', 'hack'].map((d) => join(repoRoot, d));
let files = roots.flatMap((r) => {
  try {
    return findTests(r);
  } catch {
    return [];
  }
});
// Positional arguments narrow the run to files whose path contains one of them.
if (positionals.length)
  files = files.filter((f) => positionals.some((p) => relative(repoRoot, f).includes(p)));
files.sort();
if (files.length === 0) {
  console.error('run-tests: no test files matched');
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
const ownCluster = !env.KUBECONFIG;
const loc = testLocation();
register(loc);
register(workloadsTestLocation());
if (ownCluster) {
  const t0 = Date.now();
  const running = await up(loc, (l) => console.error(`control-plane: ${l}`));
  console.error(
    `run-tests: control plane ready in ${((Date.now() - t0) / 1000).toFixed(1)}s at ${running.server}`,
  );
  env.KUBECONFIG = running.kubeconfig;
}

console.error(`run-tests: ${files.length} test files`);
const child = spawn(
  process.execPath,
  [
    '--import',
    'tsx',
    '--test',
    '--test-reporter=spec',
    `--test-concurrency=${values.concurrency}`,
    ...files.map((f) => relative(repoRoot, f)),
  ],
  { cwd: repoRoot, env, stdio: 'inherit' },
);
const code: number = await new Promise((resolve) =>
  child.on('exit', (c, signal) => resolve(c ?? (signal ? 1 : 0))),
);
if (lastUser(loc) && ownCluster && !values.keep) await down(loc);
// Test files that need workloads start their own plane on first use; it goes with the run.
if (lastUser(workloadsTestLocation()) && !values.keep) await down(workloadsTestLocation());
process.exit(code);
