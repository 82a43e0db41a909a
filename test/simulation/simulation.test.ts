// The deterministic simulation of the reconcile loop (simulation.ts), a few hundred seeds of it:
// every invariant after every step, convergence once the faults stop, no hot loop, and exact
// replay. `npm run simulate -- --seeds 10000` is the long run; a failing seed is printed with the
// command that replays it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TokenBucket } from '@mooring/runtime';
import { replayCommand } from './run.ts';
import {
  KNOWN_FINALIZE_GIVES_UP,
  KNOWN_NEGATIVE_DURATION,
  KNOWN_STALE_INVENTORY,
  KNOWN_STOP_DURING_START,
  type SimResult,
  simulate,
} from './simulation.ts';

/** About 35 s on a loaded 2-core machine; MOORING_SIM_SEEDS and MOORING_SIM_FROM move the window. */
const SEEDS = Number(process.env.MOORING_SIM_SEEDS ?? 200);
const FROM = Number(process.env.MOORING_SIM_FROM ?? 1);

test(`simulation: ${SEEDS} seeds keep every invariant and converge once the faults stop`, async (t) => {
  const failures: string[] = [];
  let converged = 0;
  for (let seed = FROM; seed < FROM + SEEDS; seed++) {
    const r = await simulate(seed);
    if (r.stepsToConverge !== undefined) converged++;
    // The bugs once marked known (known:*) are fixed: any violation, known or not, fails.
    for (const v of r.violations) {
      failures.push(
        `seed ${seed}: ${v.invariant} at step ${v.step}: ${v.message}\n  replay: ${replayCommand(seed)}`,
      );
    }
  }
  t.diagnostic(`${converged} of ${SEEDS} seeds converged`);
  assert.deepEqual(failures, [], `invariants broken:\n${failures.join('\n')}`);
});

test('a seed replays exactly: same requests, same decisions, same violations', async () => {
  for (const seed of [3, 72, 777]) {
    const a = await simulate(seed);
    const b = await simulate(seed);
    assert.equal(b.traceHash, a.traceHash, `seed ${seed} did not replay: ${replayCommand(seed)}`);
    assert.deepEqual(b.violations, a.violations);
    assert.ok(a.requests > 100, 'the run made requests');
  }
});

test('different seeds are different runs', async () => {
  const hashes = new Set<string>();
  for (const seed of [11, 12, 13]) hashes.add((await simulate(seed)).traceHash);
  assert.equal(hashes.size, 3);
});

const knownAt = (r: SimResult, invariant: string) => r.violations.filter((v) => v.invariant === invariant);

// The bugs the simulation found, each pinned to a seed that showed it; fixed since, these keep them fixed.

test('finalizing a Kustomization deletes every object of its inventory, or retries (seed 9)', async () => {
  assert.deepEqual(knownAt(await simulate(9), KNOWN_FINALIZE_GIVES_UP), []);
});

test('Controller.stop() during start() leaves no informer running (seed 72)', async () => {
  assert.deepEqual(knownAt(await simulate(72), KNOWN_STOP_DURING_START), []);
});

test('a reconcile that starts from a stale cached Kustomization keeps the stored inventory (seed 777)', async () => {
  assert.deepEqual(knownAt(await simulate(777), KNOWN_STALE_INVENTORY), []);
});

test('a wall-clock step backwards during a reconcile records no negative duration (seed 777)', async () => {
  assert.deepEqual(knownAt(await simulate(777), KNOWN_NEGATIVE_DURATION), []);
});

test("a wall-clock step backwards does not stall the client's rate limiter", () => {
  let now = 1_000_000;
  const bucket = new TokenBucket(50, 100, () => now);
  assert.equal(bucket.reserve(), 0);
  now -= 5 * 60_000; // NTP steps the clock back five minutes
  assert.equal(bucket.reserve(), 0, 'the next request should not wait for the clock to catch up');
});
