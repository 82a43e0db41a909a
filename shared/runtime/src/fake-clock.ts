import { ChainedTimer, type Clock, MAX_TIMER_DELAY_MS, type TimerHandle } from './clock.ts';

interface Timer {
  at: number;
  seq: number;
  fn: () => void;
}

/**
 * A virtual clock for tests and simulation: time moves only when `advance` is called, and due
 * timers fire in deadline order (ties in the order they were set), so a seeded run replays exactly.
 *
 * Longer delays than one Node timer takes are chained as `systemClock` chains them, over virtual
 * timers that, like Node's, fire after 1 ms with a TimeoutOverflowWarning when given more than
 * `MAX_TIMER_DELAY_MS`: a chaining bug shows under test as it would in production.
 */
export class FakeClock implements Clock {
  #now: number;
  #seq = 0;
  readonly #timers = new Map<TimerHandle, Timer>();

  constructor(startMs = 0) {
    this.#now = startMs;
  }

  now(): number {
    return this.#now;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const delay = Math.max(0, ms || 0);
    if (delay <= MAX_TIMER_DELAY_MS) return this.#timer(fn, delay);
    const chained = new ChainedTimer(
      { set: (step, stepMs) => this.#timer(step, stepMs), clear: (h) => this.#timers.delete(h) },
      fn,
      delay,
    );
    return chained as unknown as TimerHandle;
  }

  clearTimeout(handle: TimerHandle): void {
    if (handle instanceof ChainedTimer) handle.cancel();
    else this.#timers.delete(handle);
  }

  /** One virtual timer, with Node's limit: past `MAX_TIMER_DELAY_MS` it fires after 1 ms, warning. */
  #timer(fn: () => void, ms: number): TimerHandle {
    let delay = ms;
    if (delay > MAX_TIMER_DELAY_MS) {
      // Node's own words (lib/internal/timers.js), so a listener cannot tell the two apart.
      process.emitWarning(
        `${ms} does not fit into a 32-bit signed integer.\nTimeout duration was set to 1.`,
        'TimeoutOverflowWarning',
      );
      delay = 1;
    }
    const handle = {} as TimerHandle;
    this.#timers.set(handle, { at: this.#now + delay, seq: this.#seq++, fn });
    return handle;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal?.aborted) return resolve();
      const done = () => {
        this.clearTimeout(handle);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const handle = this.setTimeout(done, ms);
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  /** Timers set and not yet fired or cleared. */
  get timerCount(): number {
    return this.#timers.size;
  }

  /** Moves time forward by `ms`, firing every timer that falls due, including ones set by those timers. */
  advance(ms: number): void {
    const target = this.#now + Math.max(0, ms);
    for (let next = this.#nextDue(target); next; next = this.#nextDue(target)) {
      this.#fire(next);
    }
    this.#now = target;
  }

  /**
   * Like `advance`, but lets promise continuations run after each timer, so code that awaits
   * `sleep` and then sets another timer sees it fire within the same window.
   */
  async advanceAsync(ms: number): Promise<void> {
    const target = this.#now + Math.max(0, ms);
    await settle();
    for (let next = this.#nextDue(target); next; next = this.#nextDue(target)) {
      this.#fire(next);
      await settle();
    }
    this.#now = target;
  }

  #nextDue(target: number): [TimerHandle, Timer] | undefined {
    let best: [TimerHandle, Timer] | undefined;
    for (const entry of this.#timers) {
      const t = entry[1];
      if (t.at > target) continue;
      if (!best || t.at < best[1].at || (t.at === best[1].at && t.seq < best[1].seq)) best = entry;
    }
    return best;
  }

  #fire([handle, timer]: [TimerHandle, Timer]): void {
    this.#timers.delete(handle);
    this.#now = timer.at;
    timer.fn();
  }
}

/** Runs every queued promise continuation (and what those queue) before resolving. */
function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
