import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TimeSlicer } from './time-slice.ts';

describe('TimeSlicer', () => {
  it('lets a timer run during a long synchronous loop', async () => {
    const slicer = new TimeSlicer(2);
    let ranDuringLoop = false;
    setTimeout(() => {
      ranDuringLoop = true;
    }, 0);
    const until = performance.now() + 50;
    while (performance.now() < until && !ranDuringLoop) await slicer.yieldIfDue();
    assert.equal(ranDuringLoop, true);
  });

  it('does not yield before the slice is used up', async () => {
    const slicer = new TimeSlicer(10_000);
    let ran = false;
    setImmediate(() => {
      ran = true;
    });
    for (let i = 0; i < 1000; i++) await slicer.yieldIfDue();
    assert.equal(ran, false);
  });
});
