import { setTimeout as sleep } from 'node:timers/promises';

/**
 * How many times its stated deadline a wait may take before it fails. A deadline is patience, not
 * a speed check: on a 2-core machine at load average 20 (other suites beside this one), a
 * reconcile that takes 2 s alone took over 20 s, and a wait that fails only costs time when the
 * test fails anyway. `MOORING_TEST_PATIENCE` overrides it.
 */
export const PATIENCE = Number(process.env.MOORING_TEST_PATIENCE ?? 4);

/** Polls `check` until it returns a value other than undefined/false, or fails after `timeoutMs` × PATIENCE. */
export async function eventually<V>(
  what: string,
  check: () => Promise<V | undefined | false>,
  timeoutMs = 10_000,
): Promise<V> {
  const deadline = Date.now() + timeoutMs * PATIENCE;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined && v !== false) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
    await sleep(50);
  }
}
