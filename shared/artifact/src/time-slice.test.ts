import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TimeSlicer } from './time-slice.ts';

/**
 * Counts event-loop turns: one immediate at a time, each queueing the next. Code that only awaits
 * settled promises gives the loop no turn, so the count is exactly the number of real yields.
 */
function turnCounter(): { turns: () => number; stop: () => void } {
  let turns = 0;
  let handle = setImmediate(function tick() {
    turns++;
    handle = setImmediate(tick);
  });
  return { turns: () => turns, stop: () => clearImmediate(handle) };
}

describe('TimeSlicer', () => {
  it('yields once per slice of the clock, and only then', async () => {
    let now = 0;
    const slicer = new TimeSlicer(10, () => now);
    const counter = turnCounter();
    try {
      for (let i = 0; i < 1000; i++) await slicer.yieldIfDue();
      assert.equal(counter.turns(), 0, 'yielded with the clock standing still');
      // 100 calls, 1 ms apart on the fake clock: due at 10, 20, ... 100.
      for (let i = 0; i < 100; i++) {
        now += 1;
        await slicer.yieldIfDue();
      }
      assert.equal(counter.turns(), 10);
      // A slice starts over after each yield: 9 ms more is not yet due.
      now += 9;
      await slicer.yieldIfDue();
      assert.equal(counter.turns(), 10);
    } finally {
      counter.stop();
    }
  });

  it('lets a timer run during a long synchronous loop', async () => {
    const slicer = new TimeSlicer(2);
    let ranDuringLoop = false;
    setTimeout(() => {
      ranDuringLoop = true;
    }, 0);
    // Only a slicer that never yields reaches this bound: the slice is 2 ms, the bound 30 s.
    const giveUp = performance.now() + 30_000;
    while (!ranDuringLoop && performance.now() < giveUp) await slicer.yieldIfDue();
    assert.equal(ranDuringLoop, true);
  });
});
