import { parseDuration } from '@mooring/runtime';

const DEFAULT_TIMEOUT_MS = 60_000;

/** `spec.timeout` in milliseconds, Flux's 60 s when unset (the CRD validates the format). */
export function specTimeoutMs(timeout: string | undefined): number {
  if (!timeout) return DEFAULT_TIMEOUT_MS;
  try {
    return parseDuration(timeout);
  } catch {
    return DEFAULT_TIMEOUT_MS;
  }
}
