import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FakeClock } from './fake-clock.ts';

test('advance fires due timers in deadline order, ties in the order they were set', () => {
  const clock = new FakeClock(1000);
  const fired: string[] = [];
  clock.setTimeout(() => fired.push(`c@${clock.now()}`), 30);
  clock.setTimeout(() => fired.push(`a@${clock.now()}`), 10);
  clock.setTimeout(() => fired.push(`b@${clock.now()}`), 10);
  clock.setTimeout(() => fired.push('late'), 31);
  clock.advance(30);
  assert.deepEqual(fired, ['a@1010', 'b@1010', 'c@1030']);
  assert.equal(clock.now(), 1030);
  assert.equal(clock.timerCount, 1);
});

test('timers set by a firing timer fire within the same advance when due', () => {
  const clock = new FakeClock();
  const fired: number[] = [];
  const tick = () => {
    fired.push(clock.now());
    clock.setTimeout(tick, 10);
  };
  clock.setTimeout(tick, 10);
  clock.advance(35);
  assert.deepEqual(fired, [10, 20, 30]);
  assert.equal(clock.now(), 35);
});

test('clearTimeout cancels a timer', () => {
  const clock = new FakeClock();
  let fired = false;
  const handle = clock.setTimeout(() => {
    fired = true;
  }, 5);
  clock.clearTimeout(handle);
  clock.advance(10);
  assert.equal(fired, false);
  assert.equal(clock.timerCount, 0);
});

test('sleep resolves once time reaches it, or at once when aborted', async () => {
  const clock = new FakeClock();
  let slept = false;
  const sleeping = clock.sleep(100).then(() => {
    slept = true;
  });
  clock.advance(99);
  await new Promise(setImmediate);
  assert.equal(slept, false);
  clock.advance(1);
  await sleeping;
  assert.equal(slept, true);

  const ac = new AbortController();
  const aborted = clock.sleep(1_000, ac.signal);
  ac.abort();
  await aborted;
  assert.equal(clock.timerCount, 0);
  await clock.sleep(1_000, ac.signal);
});

test('advanceAsync lets awaited sleeps chain within one window', async () => {
  const clock = new FakeClock();
  const woke: number[] = [];
  const loop = (async () => {
    for (let i = 0; i < 3; i++) {
      await clock.sleep(10);
      woke.push(clock.now());
    }
  })();
  await clock.advanceAsync(30);
  await loop;
  assert.deepEqual(woke, [10, 20, 30]);
});
