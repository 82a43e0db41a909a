import { INTERVAL_BOUNDS } from '@mooring/api';
import { backoffDelay } from './backoff.ts';
import { type Clock, systemClock, type TimerHandle } from './clock.ts';

/** Shortest periodic requeue: the least interval the CRDs admit (1s). */
export const MIN_REQUEUE_MS = INTERVAL_BOUNDS.minMs;

/**
 * Longest requeue: the greatest interval the CRDs admit (168h), well inside the 2^31-1 ms one
 * Node timer takes. An object stored with a longer interval before the CRDs bounded it is
 * reconciled at least this often.
 */
export const MAX_REQUEUE_MS = INTERVAL_BOUNDS.maxMs;

/**
 * The delay a requeue of `addAfter` gets: `ms` within [MIN_REQUEUE_MS, MAX_REQUEUE_MS]. Zero,
 * negative and NaN (an interval that slipped past admission) become the minimum instead of
 * "now", which reconciled one bad object in a hot loop (the CVE-2022-39272 class); longer delays,
 * Infinity too, become the maximum instead of overflowing a timer into 1 ms.
 */
export function requeueDelay(ms: number): number {
  if (!(ms >= MIN_REQUEUE_MS)) return MIN_REQUEUE_MS;
  return Math.min(ms, MAX_REQUEUE_MS);
}

export interface WorkQueueOptions {
  clock?: Clock;
  /** First retry delay of `addRateLimited`, at least 1 ms; doubles with each further failure. */
  baseDelayMs?: number;
  /** Longest retry delay of `addRateLimited`; never more than `MAX_REQUEUE_MS` whatever is given. */
  maxDelayMs?: number;
  /** Retry delays are spread by ± this fraction. */
  jitterFraction?: number;
  /** Source of randomness for jitter; `() => 0.5` disables it. */
  random?: () => number;
}

interface Waiter {
  resolve(key: string | undefined): void;
  signal: AbortSignal | undefined;
  onAbort: () => void;
}

/**
 * Why a key is ready: `add` (something changed: a new generation, a source's new revision, a
 * reconcile request) or a delay falling due (the interval, a retry's backoff).
 */
type Lane = 'changed' | 'due';

/**
 * The controller work queue (client-go's rate-limited delaying queue): keys are deduplicated,
 * served first in first out, and never handed to two workers at once; a key added while it is
 * being processed is served again only after `done`.
 *
 * Keys made ready by `add` go ahead of keys whose delay fell due: with 1000 Kustomizations on a
 * 1m interval the due keys can outnumber what the workers serve, and a pushed commit's reconcile
 * waited behind all of them (over 30 s, issue #21). A due key waits only while changed keys keep
 * coming faster than the workers take them; each key is in the queue once, so that is bounded by
 * how many objects change.
 */
export class WorkQueue {
  readonly #clock: Clock;
  readonly #baseDelayMs: number;
  readonly #maxDelayMs: number;
  readonly #jitterFraction: number;
  readonly #random: (() => number) | undefined;

  // A Set keeps insertion order, so each is both a FIFO and a deduplication index; a key is in at
  // most one of the two.
  readonly #changed = new Set<string>();
  readonly #due = new Set<string>();
  readonly #processing = new Set<string>();
  /** Keys made ready while processing, and in which lane: ready again on `done`. Keys of `#processing` only. */
  readonly #dirty = new Map<string, Lane>();
  readonly #delayed = new Map<string, { at: number; timer: TimerHandle }>();
  readonly #failures = new Map<string, number>();
  readonly #waiters: Waiter[] = [];
  /** Keys both delayed and processing, so `pending` counts them once without a scan. */
  #delayedAndProcessing = 0;
  #shutDown = false;

  constructor(options: WorkQueueOptions = {}) {
    const { baseDelayMs = 750, maxDelayMs = 15 * 60_000, jitterFraction = 0.1 } = options;
    // A zero base would retry a failing key at once, forever: 0 * 2^n stays 0.
    if (!(baseDelayMs >= 1 && maxDelayMs >= baseDelayMs && jitterFraction >= 0 && jitterFraction <= 1)) {
      throw new Error(
        `invalid work queue options: need 1 <= baseDelayMs (${baseDelayMs}) <= maxDelayMs (${maxDelayMs}) and jitterFraction (${jitterFraction}) in [0, 1]`,
      );
    }
    this.#clock = options.clock ?? systemClock;
    this.#baseDelayMs = baseDelayMs;
    this.#maxDelayMs = maxDelayMs;
    this.#jitterFraction = jitterFraction;
    this.#random = options.random;
  }

  /** Makes `key` ready now, ahead of keys whose delay fell due; supersedes any pending delay for it. */
  add(key: string): void {
    if (this.#shutDown) return;
    this.#cancelDelay(key);
    this.#enqueue(key, 'changed');
  }

  /**
   * Makes `key` ready after `requeueDelay(ms)`: never sooner than `MIN_REQUEUE_MS`, even for 0 or
   * NaN (use `add` for now), and never later than `MAX_REQUEUE_MS`. The earliest request wins: a
   * key already ready (or due again right after processing) ignores it, and a later deadline than
   * one pending is dropped.
   */
  addAfter(key: string, ms: number): void {
    this.#schedule(key, requeueDelay(ms));
  }

  /**
   * Requeues `key` after its exponential backoff and counts one more failure for it. The backoff
   * is at least 1 ms and at most `MAX_REQUEUE_MS`; it is not floored at `MIN_REQUEUE_MS`, since it
   * grows with each failure anyway.
   */
  addRateLimited(key: string): void {
    const failures = this.failures(key);
    this.#failures.set(key, failures + 1);
    const delay = backoffDelay(failures, {
      baseMs: this.#baseDelayMs,
      maxMs: this.#maxDelayMs,
      jitterFraction: this.#jitterFraction,
      random: this.#random,
    });
    this.#schedule(key, Math.min(Math.max(1, delay), MAX_REQUEUE_MS));
  }

  /** Resets the failure count of `key`; call after it was processed successfully. */
  forget(key: string): void {
    this.#failures.delete(key);
  }

  /** Failures counted for `key` since it was last forgotten. */
  failures(key: string): number {
    return this.#failures.get(key) ?? 0;
  }

  /**
   * The next ready key, now marked as processing (call `done` when finished); waits while none is
   * ready. Resolves `undefined` once the queue is shut down or `signal` aborts.
   */
  get(signal?: AbortSignal): Promise<string | undefined> {
    if (this.#shutDown || signal?.aborted) return Promise.resolve(undefined);
    const key = this.#take();
    if (key !== undefined) return Promise.resolve(key);
    return new Promise((resolve) => {
      const waiter: Waiter = {
        resolve,
        signal,
        onAbort: () => {
          const i = this.#waiters.indexOf(waiter);
          if (i >= 0) this.#waiters.splice(i, 1);
          resolve(undefined);
        },
      };
      signal?.addEventListener('abort', waiter.onAbort, { once: true });
      this.#waiters.push(waiter);
    });
  }

  /** Marks `key` as no longer processing; if it was added meanwhile, it is ready again. */
  done(key: string): void {
    if (!this.#processing.delete(key)) return;
    if (this.#delayed.has(key)) this.#delayedAndProcessing--;
    const lane = this.#dirty.get(key);
    this.#dirty.delete(key);
    if (lane && !this.#shutDown) this.#enqueue(key, lane);
  }

  /** Stops the queue: pending delays are dropped, waiting and later `get`s resolve `undefined`. */
  shutDown(): void {
    if (this.#shutDown) return;
    this.#shutDown = true;
    for (const { timer } of this.#delayed.values()) this.#clock.clearTimeout(timer);
    this.#delayed.clear();
    this.#delayedAndProcessing = 0;
    this.#changed.clear();
    this.#due.clear();
    this.#dirty.clear();
    for (const waiter of this.#waiters.splice(0)) {
      waiter.signal?.removeEventListener('abort', waiter.onAbort);
      waiter.resolve(undefined);
    }
  }

  get shuttingDown(): boolean {
    return this.#shutDown;
  }

  /** Keys ready to be handed out. */
  get length(): number {
    return this.#changed.size + this.#due.size;
  }

  /**
   * Distinct keys ready, delayed or processing: the queue-depth metric, read on every informer
   * event, so counted as keys move rather than by a scan of the delayed ones (2 % of an operator's
   * CPU at 1,000 Kustomizations). A ready key is never delayed: `add` cancels the delay and a
   * delay's timer removes it before the key is made ready.
   */
  get pending(): number {
    return this.length + this.#processing.size + this.#delayed.size - this.#delayedAndProcessing;
  }

  /** `pending` by its definition, a scan of every set (for tests of the count). */
  pendingByScan(): number {
    return new Set([...this.#changed, ...this.#due, ...this.#processing, ...this.#delayed.keys()]).size;
  }

  /** Makes `key` ready after `ms`, which callers keep within (0, MAX_REQUEUE_MS], so one timer holds it. */
  #schedule(key: string, ms: number): void {
    if (this.#shutDown) return;
    if (this.#changed.has(key) || this.#due.has(key) || this.#dirty.has(key)) return;
    const at = this.#clock.now() + ms;
    const pending = this.#delayed.get(key);
    if (pending && pending.at <= at) return;
    if (pending) this.#clock.clearTimeout(pending.timer);
    const timer = this.#clock.setTimeout(() => {
      this.#forgetDelay(key);
      this.#enqueue(key, 'due');
    }, ms);
    if (!pending && this.#processing.has(key)) this.#delayedAndProcessing++;
    this.#delayed.set(key, { at, timer });
  }

  #cancelDelay(key: string): void {
    const pending = this.#delayed.get(key);
    if (!pending) return;
    this.#clock.clearTimeout(pending.timer);
    this.#forgetDelay(key);
  }

  #forgetDelay(key: string): void {
    if (this.#delayed.delete(key) && this.#processing.has(key)) this.#delayedAndProcessing--;
  }

  #enqueue(key: string, lane: Lane): void {
    if (this.#processing.has(key)) {
      if (this.#dirty.get(key) !== 'changed') this.#dirty.set(key, lane);
      return;
    }
    if (this.#changed.has(key)) return;
    if (lane === 'changed') {
      // A due key that changed meanwhile moves up; a changed one keeps its place.
      this.#due.delete(key);
      this.#changed.add(key);
    } else {
      this.#due.add(key);
    }
    this.#dispatch();
  }

  /** Hands ready keys to waiting getters, oldest getter first. */
  #dispatch(): void {
    while (this.#waiters.length > 0 && this.length > 0) {
      const waiter = this.#waiters.shift()!;
      waiter.signal?.removeEventListener('abort', waiter.onAbort);
      waiter.resolve(this.#take());
    }
  }

  #take(): string | undefined {
    const lane = this.#changed.size > 0 ? this.#changed : this.#due;
    const next = lane.values().next();
    if (next.done) return undefined;
    lane.delete(next.value);
    this.#processing.add(next.value);
    return next.value;
  }
}
