// A warm renderer that has rendered before, then runs a template that loops until the time limit:
// the guest's Go runtime calls WASI all the while and grows its memory now and then. On Node 20
// this killed the whole process (SIGSEGV in a garbage collection's stack walk, nothing printed)
// within seconds, most times, until the renderers stopped using V8's fast API calls
// (renderer-worker.ts). The rounds run in a child process (long-render-rounds.ts), so a crash is
// reported as one instead of ending this file with no word.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { it } from 'node:test';
import { requireHelmBinaries } from './helm-oracle.ts';

requireHelmBinaries();

it('a reused renderer running a template to its time limit does not crash the process', {
  timeout: 600_000,
}, async () => {
  // Two processes at once, three rounds each. Without the fix, both runs of this file on this
  // machine failed with a SIGSEGV; with one process instead of two, 3 runs in 5 did. V8's default
  // tiers in the child: the test runner's --liftoff-only made the crash rarer.
  const rounds = 3;
  const outcomes = await Promise.all([1, 2].map(() => runRounds(rounds)));
  for (const { code, signal, out } of outcomes) {
    assert.equal(signal, null, `the renderer's process was killed by ${signal}:\n${out}`);
    assert.equal(code, 0, out);
    assert.match(out, new RegExp(`^round ${rounds} of ${rounds}: `, 'm'));
  }
});

async function runRounds(
  rounds: number,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; out: string }> {
  const script = join(import.meta.dirname, 'long-render-rounds.ts');
  const child = spawn(process.execPath, ['--import', 'tsx', script, String(rounds)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d));
  child.stderr.on('data', (d: Buffer) => (out += d));
  return new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal, out })));
}
