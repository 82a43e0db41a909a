import { setTimeout as sleep } from 'node:timers/promises';
import { DeadlineScope } from '@mooring/runtime';
import type { OutboundRequest, ProviderConfig } from './types.ts';
import { type Dispatcher, loadUndici } from './undici.ts';

export interface SendOptions {
  /** Attempts in all, the first included; default 4 (Flux's retry max). */
  attempts?: number;
  /** Delay before the first retry, doubled each time up to `maxDelayMs`; default 2 s. */
  baseDelayMs?: number;
  maxDelayMs?: number;
  signal?: AbortSignal;
}

/** A send that failed for good; the message names the status or network error code, never the URL. */
export class SendError extends Error {
  readonly status: number | undefined;
  constructor(message: string, status?: number) {
    super(message);
    this.name = 'SendError';
    this.status = status;
  }
}

/** A dispatcher carrying the Provider's CA / client certificate, through its proxy when it has one. */
function dispatcherFor(p: Pick<ProviderConfig, 'tls' | 'proxy'>): Dispatcher {
  const tls = { ca: p.tls?.ca, cert: p.tls?.cert, key: p.tls?.key };
  const { Agent, ProxyAgent } = loadUndici();
  if (p.proxy) return new ProxyAgent({ uri: p.proxy, requestTls: tls });
  return new Agent({ connect: tls });
}

const retryable = (status: number) => status >= 500 || status === 429;

/**
 * Sends one provider request with the Provider's timeout per attempt, retrying network errors,
 * 5xx and 429 a bounded number of times with exponential backoff; 4xx fails at once.
 */
export async function sendRequest(
  req: OutboundRequest,
  p: Pick<ProviderConfig, 'tls' | 'proxy' | 'timeoutMs'>,
  options: SendOptions = {},
): Promise<number> {
  const attempts = options.attempts ?? 4;
  const base = options.baseDelayMs ?? 2_000;
  const max = options.maxDelayMs ?? 30_000;
  const dispatcher = dispatcherFor(p);
  const { request } = loadUndici();
  try {
    for (let attempt = 1; ; attempt++) {
      let failure: SendError;
      // Cleared when the attempt ends, so a quick answer leaves no timer for the full timeout.
      const deadline = new DeadlineScope(options.signal);
      try {
        const signal = deadline.signal(p.timeoutMs);
        const res = await request(req.url, {
          method: req.method,
          headers: req.headers,
          body: req.body,
          dispatcher,
          signal,
        });
        // Drain so the connection is reused; the provider's answer is not needed.
        await res.body.dump({ limit: 64 * 1024 }).catch(() => {});
        if (res.statusCode < 300) return res.statusCode;
        failure = new SendError(`the provider answered HTTP ${res.statusCode}`, res.statusCode);
        if (!retryable(res.statusCode)) throw failure;
      } catch (err) {
        if (err instanceof SendError && !retryable(err.status ?? 0)) throw err;
        if (err instanceof SendError) failure = err;
        else {
          const e = err as { code?: string; name?: string };
          // Network errors can carry the URL, which may hold a token (Telegram): keep only the code.
          const why =
            e.name === 'TimeoutError'
              ? `no answer within ${p.timeoutMs} ms`
              : (e.code ?? e.name ?? 'network error');
          failure = new SendError(`the request failed: ${why}`);
        }
      } finally {
        deadline.clear();
      }
      if (attempt >= attempts || options.signal?.aborted) {
        throw new SendError(`${failure.message} (after ${attempt} attempts)`, failure.status);
      }
      await sleep(Math.min(max, base * 2 ** (attempt - 1)), undefined, { signal: options.signal }).catch(
        () => {},
      );
    }
  } finally {
    void dispatcher.close().catch(() => {});
  }
}
