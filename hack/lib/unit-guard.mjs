// Loaded into every Node process of a run without a cluster (`hack/run-tests.ts --unit` or
// `--integration` adds it to NODE_OPTIONS, so test files, the programs they start and those
// programs' children all get it). Such a run starts no control plane: if a test that
// hack/lib/test-files.ts judged cluster-free tries to start etcd, kube-apiserver or a controller,
// the start throws and the test fails with the reason, instead of a cluster quietly coming up.
// In a unit run (MOORING_UNIT_GUARD_TOOLS=1) the same holds for the servers and tools that make a
// test an integration test. Plain JavaScript, because it also loads into processes that run
// without tsx.
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

// What hack/lib/test-files.ts's INTEGRATION_ENTRY_POINTS start (the image build and the mooring
// command run only Node and small tools, so they cannot be told apart here).
const TOOLS = new Set(['sshd', 'docker-registry', 'helm', 'runc', 'prometheus', 'chromium']);
const guardTools = process.env.MOORING_UNIT_GUARD_TOOLS === '1';

/** @param {string} message @param {string} code */
function refuse(message, code) {
  const err = new Error(message);
  Object.assign(err, { code });
  throw err;
}

/**
 * @param {unknown} command the file (or, for exec, the shell command line) about to run
 * @param {unknown} args its arguments (spawn and execFile)
 */
function check(command, args, shell = false) {
  if (typeof command !== 'string') return;
  const words = shell ? command.trim().split(/\s+/) : [command, ...(Array.isArray(args) ? args : [])];
  const file = words[0] ?? '';
  const name = basename(file);
  if (CONTROL_PLANE.has(name)) {
    refuse(
      `a unit run starts no control plane, but this test started ${file}. It needs a cluster, ` +
        'which hack/lib/test-files.ts did not see: add what it calls to CLUSTER_ENTRY_POINTS there ' +
        '(npm test runs it with a cluster)',
      'MOORING_UNIT_RUN_NO_CLUSTER',
    );
  }
  if (guardTools && (TOOLS.has(name) || (name === 'git' && words[1] === 'http-backend'))) {
    refuse(
      `a unit run starts no servers or tools, but this test started ${words.slice(0, 2).join(' ')}. ` +
        'It is an integration test, which hack/lib/test-files.ts did not see: add what it calls to ' +
        'INTEGRATION_ENTRY_POINTS there (npm test runs it)',
      'MOORING_UNIT_RUN_NO_TOOLS',
    );
  }
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
    check(args[0], args[1], shell);
    return original.apply(this, args);
  };
  // promisify(execFile) and promisify(exec) resolve to { stdout, stderr } through this symbol.
  const custom = original[promisify.custom];
  if (custom) {
    guarded[promisify.custom] = (/** @type {unknown[]} */ ...args) => {
      check(args[0], args[1], shell);
      return custom(...args);
    };
  }
  childProcess[name] = guarded;
}
// `import { spawn } from 'node:child_process'` sees the guarded functions too.
syncBuiltinESMExports();
