import { setTimeout as sleep } from 'node:timers/promises';

/** Polls `check` until it returns a value other than undefined/false, or fails after `timeoutMs`. */
export async function eventually<V>(
  what: string,
  check: () => Promise<V | undefined | false>,
  timeoutMs = 10_000,
): Promise<V> {
  const deadline = Date.now() + timeoutMs;
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
