// Loaded into every Node process of a unit run (`hack/run-tests.ts --unit` adds it to
// NODE_OPTIONS, so test files, the programs they start and those programs' children all get it).
// A unit run starts no control plane: if a test that hack/lib/test-files.ts judged cluster-free
// tries to start etcd, kube-apiserver or a controller, the start throws and the test fails with
// the reason, instead of a cluster quietly coming up. Plain JavaScript, because it also loads
// into processes that run without tsx.
import childProcess from 'node:child_process';
import { syncBuiltinESMExports } from 'node:module';
import { basename } from 'node:path';
import { promisify } from 'node:util';

const CONTROL_PLANE = new Set([
  'etcd',
  'kube-apiserver',
  'kube-controller-manager',
  'kube-scheduler',
  'kwok',
]);

/** @param {unknown} command the file (or, for exec, the shell command line) about to run */
function check(command, shell = false) {
  if (typeof command !== 'string') return;
  const file = shell ? (command.trim().split(/\s+/)[0] ?? '') : command;
  if (!CONTROL_PLANE.has(basename(file))) return;
  const err = new Error(
    `a unit run starts no control plane, but this test started ${file}. It needs a cluster, ` +
      'which hack/lib/test-files.ts did not see: add what it calls to CLUSTER_ENTRY_POINTS there ' +
      '(npm test runs it with a cluster)',
  );
  Object.assign(err, { code: 'MOORING_UNIT_RUN_NO_CLUSTER' });
  throw err;
}

for (const [name, shell] of [
  ['spawn', false],
  ['spawnSync', false],
  ['execFile', false],
  ['execFileSync', false],
  ['exec', true],
  ['execSync', true],
]) {
  const original = childProcess[name];
  const guarded = function (/** @type {unknown[]} */ ...args) {
    check(args[0], shell);
    return original.apply(this, args);
  };
  // promisify(execFile) and promisify(exec) resolve to { stdout, stderr } through this symbol.
  const custom = original[promisify.custom];
  if (custom) {
    guarded[promisify.custom] = (/** @type {unknown[]} */ ...args) => {
      check(args[0], shell);
      return custom(...args);
    };
  }
  childProcess[name] = guarded;
}
// `import { spawn } from 'node:child_process'` sees the guarded functions too.
syncBuiltinESMExports();
