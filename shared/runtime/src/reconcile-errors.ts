import type { Reason } from '@mooring/api';

/**
 * How a reconcile can end other than in success. A reason is a member of `Reason`
 * (shared/api/src/conditions.ts), so a mistyped or unknown one fails to compile. Anything else thrown counts as retryable with
 * reason `ReconciliationFailed`.
 */

/** Retrying cannot help until the spec changes (invalid spec, forbidden reference). */
export class StalledError extends Error {
  readonly reason: Reason;
  constructor(reason: Reason, message: string) {
    super(message);
    this.name = 'StalledError';
    this.reason = reason;
  }
}

/** Not an error: something this object needs is not ready yet; look again after a while. */
export class WaitingError extends Error {
  readonly reason: Reason;
  readonly requeueAfterMs: number;
  constructor(reason: Reason, message: string, requeueAfterMs: number) {
    super(message);
    this.name = 'WaitingError';
    this.reason = reason;
    this.requeueAfterMs = requeueAfterMs;
  }
}

/** A failure worth retrying with backoff, with a reason more precise than `ReconciliationFailed`. */
export class RetryableError extends Error {
  readonly reason: Reason;
  constructor(reason: Reason, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'RetryableError';
    this.reason = reason;
  }
}
