// Interval abuse (the CVE-2022-39272 class, issue 20 defect 4): `interval: 0s` requeued an object
// at once, in a hot loop, and `interval: 1000h` overflowed setTimeout past 2^31-1 ms into 1 ms,
// with a TimeoutOverflowWarning each time. Everything here runs in virtual time or counts events:
// nothing depends on how fast the machine is.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  ChainedTimer,
  type Clock,
  clearableTimeout,
  jitter,
  MAX_TIMER_DELAY_MS,
  systemClock,
} from './clock.ts';
import { parseDuration } from './duration.ts';
import { FakeClock } from './fake-clock.ts';
import { MAX_REQUEUE_MS, MIN_REQUEUE_MS, requeueDelay, WorkQueue } from './work-queue.ts';

const HOUR = 3_600_000;

/** Runs `fn`, then lets pending warnings be emitted, and returns the TimeoutOverflowWarnings seen. */
async function overflowWarnings(fn: () => void | Promise<void>): Promise<Error[]> {
  const seen: Error[] = [];
  const listener = (warning: Error) => {
    if (warning.name === 'TimeoutOverflowWarning') seen.push(warning);
  };
  process.on('warning', listener);
  try {
    await fn();
    // process.emitWarning emits on the next tick; a macrotask later every one has been.
    await new Promise(setImmediate);
  } finally {
    process.off('warning', listener);
  }
  return seen;
}

/** A FakeClock that records every delay handed to `setTimeout`. */
function spyClock(): { clock: Clock & FakeClock; delays: number[] } {
  const clock = new FakeClock();
  const delays: number[] = [];
  const set = clock.setTimeout.bind(clock);
  clock.setTimeout = (fn, ms) => {
    delays.push(ms);
    return set(fn, ms);
  };
  return { clock, delays };
}

/**
 * What a controller does with one object: take it, reconcile it, requeue it after `interval()`
 * (as controller.ts: `addAfter(key, jitter(interval, 0.05))`). Virtual time moves in `stepMs`
 * steps for `forMs`; returns how often each key was reconciled. More than 10 reconciles of one key
 * within one step is a hot loop and fails at once (the old queue would never leave the loop).
 */
async function reconcileLoop(
  intervals: Record<string, () => number>,
  forMs: number,
  stepMs = 100,
): Promise<Record<string, number>> {
  const clock = new FakeClock();
  const q = new WorkQueue({ clock, random: () => 0.5 });
  const counts: Record<string, number> = {};
  for (const key of Object.keys(intervals)) {
    counts[key] = 0;
    q.add(key);
  }
  for (let t = 0; t < forMs; t += stepMs) {
    const inStep: Record<string, number> = {};
    while (q.length > 0) {
      const key = (await q.get())!;
      counts[key]!++;
      inStep[key] = (inStep[key] ?? 0) + 1;
      if (inStep[key] > 10) assert.fail(`hot loop: ${key} was reconciled ${inStep[key]} times at ${t} ms`);
      q.done(key);
      q.addAfter(
        key,
        jitter(intervals[key]!(), 0.05, () => 0.5),
      );
    }
    clock.advance(stepMs);
  }
  q.shutDown();
  return counts;
}

describe('interval abuse: requeueDelay', () => {
  const cases: [number, number][] = [
    [0, MIN_REQUEUE_MS],
    [-1, MIN_REQUEUE_MS],
    [Number.NaN, MIN_REQUEUE_MS],
    [-Infinity, MIN_REQUEUE_MS],
    [1, MIN_REQUEUE_MS],
    [999, MIN_REQUEUE_MS],
    [1_000, 1_000],
    [60_000, 60_000],
    [MAX_REQUEUE_MS, MAX_REQUEUE_MS],
    [1000 * HOUR, MAX_REQUEUE_MS],
    [2 ** 31, MAX_REQUEUE_MS],
    [Infinity, MAX_REQUEUE_MS],
  ];
  for (const [ms, expected] of cases) {
    test(`interval abuse: requeueDelay(${ms}) is ${expected}`, () =>
      assert.equal(requeueDelay(ms), expected));
  }

  test('interval abuse: the bounds are the CRD interval bounds, and one timer holds the longest', () => {
    assert.equal(MIN_REQUEUE_MS, parseDuration('1s'));
    assert.equal(MAX_REQUEUE_MS, parseDuration('168h'));
    assert.ok(MAX_REQUEUE_MS <= MAX_TIMER_DELAY_MS);
  });
});

describe('interval abuse: the work queue', () => {
  test('interval abuse: interval 0s, NaN, negative or sub-second does not make a hot loop', async () => {
    for (const [what, interval] of [
      ['0s', () => parseDuration('0s')],
      ['NaN', () => Number.NaN],
      ['-1', () => -1],
      ['1ms', () => 1],
    ] as const) {
      // One simulated minute: at most one reconcile a second (MIN_REQUEUE_MS), not thousands.
      const counts = await reconcileLoop({ bad: interval }, 60_000);
      assert.equal(counts.bad, 60, `interval ${what}: ${counts.bad} reconciles in a simulated minute`);
    }
  });

  test("interval abuse: one object's bad interval does not change another's schedule", async () => {
    const counts = await reconcileLoop({ bad: () => 0, good: () => 10_000, huge: () => 1000 * HOUR }, 60_000);
    assert.deepEqual(counts, { bad: 60, good: 6, huge: 1 });
  });

  test('interval abuse: a delay past 2^31-1 ms does not fire early and warns of no overflow', async () => {
    const { clock, delays } = spyClock();
    const q = new WorkQueue({ clock, random: () => 0.5, baseDelayMs: 2 ** 40, maxDelayMs: 2 ** 50 });
    const warnings = await overflowWarnings(() => {
      q.addAfter('past-int32', 2 ** 31);
      q.addAfter('1000h', 1000 * HOUR);
      q.addAfter('infinite', Infinity);
      q.addRateLimited('backoff');
      // The old queue fired all of these after 1 ms.
      clock.advance(1);
      assert.equal(q.length, 0, 'a long delay fired after 1 ms');
      clock.advance(MAX_REQUEUE_MS - 2);
      assert.equal(q.length, 0, 'a long delay fired before MAX_REQUEUE_MS');
      clock.advance(1);
    });
    assert.deepEqual(warnings, []);
    assert.equal(q.length, 4, 'each long delay fires once, at MAX_REQUEUE_MS');
    assert.ok(
      delays.every((ms) => Number.isFinite(ms) && ms > 0 && ms <= MAX_TIMER_DELAY_MS),
      `delays handed to the clock: ${delays}`,
    );
  });

  test('interval abuse: a week of 1000h requeues reconciles once per MAX_REQUEUE_MS', async () => {
    const counts = await reconcileLoop({ huge: () => 1000 * HOUR }, 3 * MAX_REQUEUE_MS + 1, HOUR);
    assert.equal(counts.huge, 4, 'at 0, 168h, 336h and 504h');
  });
});

describe('interval abuse: timers past 2^31-1 ms', () => {
  test('interval abuse: the warning listener sees an overflowing Node timer (control)', async () => {
    const warnings = await overflowWarnings(() => clearTimeout(setTimeout(() => {}, 2 ** 31)));
    assert.equal(warnings.length, 1);
  });

  test('interval abuse: the fake clock chains a long timer and fires it exactly at its deadline', async () => {
    const clock = new FakeClock();
    const fired: number[] = [];
    const warnings = await overflowWarnings(() => {
      clock.setTimeout(() => fired.push(clock.now()), 3 * MAX_TIMER_DELAY_MS + 5);
      clock.advance(1);
      assert.deepEqual(fired, [], 'fired after 1 ms, as an overflowing Node timer does');
      clock.advance(3 * MAX_TIMER_DELAY_MS + 3);
      assert.deepEqual(fired, []);
      clock.advance(1);
    });
    assert.deepEqual(fired, [3 * MAX_TIMER_DELAY_MS + 5]);
    assert.deepEqual(warnings, []);
    assert.equal(clock.timerCount, 0);
  });

  test('interval abuse: a cleared long timer and a long sleep on the fake clock leave nothing behind', async () => {
    const clock = new FakeClock();
    let fired = false;
    const handle = clock.setTimeout(() => {
      fired = true;
    }, 2 ** 33);
    clock.advance(MAX_TIMER_DELAY_MS); // one step re-armed
    clock.clearTimeout(handle);
    assert.equal(clock.timerCount, 0);
    clock.advance(2 ** 34);
    assert.equal(fired, false);

    let woke = false;
    const sleeping = clock.sleep(2 ** 32).then(() => {
      woke = true;
    });
    await clock.advanceAsync(2 ** 32 - 1);
    assert.equal(woke, false);
    await clock.advanceAsync(1);
    await sleeping;
    assert.equal(woke, true);
  });

  test('interval abuse: ChainedTimer never hands one timer more than 2^31-1 ms', () => {
    const steps: number[] = [];
    let pending: (() => void) | undefined;
    let fired = 0;
    new ChainedTimer<number>(
      {
        set(fn, ms) {
          steps.push(ms);
          pending = fn;
          return steps.length;
        },
        clear() {
          pending = undefined;
        },
      },
      () => fired++,
      2.5 * MAX_TIMER_DELAY_MS,
    );
    while (pending) {
      const run = pending;
      pending = undefined;
      run();
    }
    assert.equal(fired, 1);
    assert.deepEqual(steps, [MAX_TIMER_DELAY_MS, MAX_TIMER_DELAY_MS, 0.5 * MAX_TIMER_DELAY_MS]);
  });

  test('interval abuse: the system clock takes any delay without overflowing into 1 ms', async () => {
    let fired = 0;
    const abort = new AbortController();
    let slept = false;
    const warnings = await overflowWarnings(async () => {
      const handles = [
        systemClock.setTimeout(() => fired++, 2 ** 31),
        systemClock.setTimeout(() => fired++, 1000 * HOUR),
        systemClock.setTimeout(() => fired++, Infinity),
      ];
      const sleeping = systemClock.sleep(2 ** 32, abort.signal).then(() => {
        slept = true;
      });
      // Node runs timers in deadline order: an overflowed one (due after 1 ms, set first) would
      // run before this one, due after 5 ms. Event order, not a race against the machine's speed.
      await new Promise((resolve) => setTimeout(resolve, 5));
      assert.equal(fired, 0, 'a long timer fired early');
      assert.equal(slept, false, 'a long sleep ended early');
      for (const handle of handles) systemClock.clearTimeout(handle);
      abort.abort();
      await sleeping;
    });
    assert.deepEqual(warnings, []);
    assert.equal(fired, 0);
  });

  test('interval abuse: the system clock still runs NaN and negative delays at once', async () => {
    const order: string[] = [];
    await new Promise<void>((resolve) => {
      systemClock.setTimeout(() => order.push('NaN'), Number.NaN);
      systemClock.setTimeout(() => order.push('negative'), -5);
      setTimeout(() => {
        order.push('1 ms');
        resolve();
      }, 1);
    });
    assert.deepEqual(order, ['NaN', 'negative', '1 ms']);
  });
});

describe('interval abuse: a stored absurd timeout does not abort at once', () => {
  test('clearableTimeout holds past 2^31-1 ms instead of firing after 1 ms', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on('warning', onWarning);
    const signal = clearableTimeout(1000 * 3_600_000).signal;
    await new Promise((r) => setTimeout(r, 20));
    process.off('warning', onWarning);
    assert.equal(signal.aborted, false);
    assert.deepEqual(warnings, []);
  });
});
