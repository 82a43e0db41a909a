import { jitter } from './clock.ts';

export interface BackoffOptions {
  baseMs: number;
  maxMs: number;
  /** Spread as a fraction of the delay (±); 0.1 unless given. */
  jitterFraction?: number;
  random?: () => number;
}

/**
 * Delay before the next retry after `failures` earlier failures: `base * 2^failures` with jitter,
 * never more than `max` (jitter only spreads downwards at the cap), never negative.
 */
export function backoffDelay(failures: number, options: BackoffOptions): number {
  const { baseMs, maxMs, jitterFraction = 0.1, random } = options;
  // The exponent is bounded so a long failure streak stays finite (and 0 * Infinity never yields NaN).
  const exponential = Math.min(maxMs, baseMs * 2 ** Math.min(Math.max(0, failures), 64));
  return Math.max(0, Math.min(maxMs, jitter(exponential, jitterFraction, random)));
}
