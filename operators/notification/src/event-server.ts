import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RuntimeLogger } from '@mooring/runtime';
import { cleanMetadata, dedupeKey, type InboundEvent, parseEvent } from './event.ts';
import { ExpiringSet } from './expiring-set.ts';
import { BodyTooLargeError, readBody } from './read-body.ts';

/** Flux's event body limit. */
export const MAX_EVENT_BYTES = 3 * 1024 * 1024;

export interface EventServerOptions {
  /** Where accepted events go; called without awaiting, after the 202 is written. */
  dispatch(event: InboundEvent): Promise<unknown>;
  log: RuntimeLogger;
  /** Duplicates of an event within this time are answered 429; `--rate-limit-interval`, 5m by default. */
  rateLimitIntervalMs: number;
  maxBodyBytes?: number;
  /** Dispatches running at once before new events are refused with 503; default 1,000. */
  maxInFlight?: number;
  now?: () => number;
}

/**
 * The event receiver every operator posts to (ARCHITECTURE.md, event contract): POST on any path,
 * 413 past the body limit, 400 for a body that is not an event, 429 for a duplicate within the
 * rate-limit interval, otherwise 202 and an asynchronous dispatch.
 */
export class EventServer {
  readonly #o: EventServerOptions;
  readonly #seen: ExpiringSet;
  readonly #server: Server;
  readonly #inFlight = new Set<Promise<unknown>>();

  constructor(options: EventServerOptions) {
    this.#o = options;
    this.#seen = new ExpiringSet(options.rateLimitIntervalMs, 100_000, options.now);
    this.#server = createServer({ headersTimeout: 10_000, requestTimeout: 30_000 }, (req, res) => {
      this.#handle(req, res).catch((err: Error) => {
        this.#o.log.error({ err: err.message }, 'event request failed');
        reply(res, 500, 'internal error');
      });
    });
  }

  /** Listens on `port` (0 picks one) and `host`; resolves to the bound port. */
  listen(port: number, host?: string): Promise<number> {
    return new Promise((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen(port, host, () => resolve((this.#server.address() as AddressInfo).port));
    });
  }

  /** Stops accepting, then waits for dispatches in flight. */
  async close(): Promise<void> {
    await new Promise<void>((r) => {
      this.#server.close(() => r());
      this.#server.closeAllConnections();
    });
    await Promise.allSettled([...this.#inFlight]);
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'POST') {
      req.resume();
      return reply(res, 405, 'only POST is accepted');
    }
    let body: Buffer;
    try {
      body = await readBody(req, this.#o.maxBodyBytes ?? MAX_EVENT_BYTES);
    } catch (err) {
      if (err instanceof BodyTooLargeError) return reply(res, 413, err.message, true);
      return reply(res, 400, 'the request body could not be read');
    }
    let json: unknown;
    try {
      json = JSON.parse(body.toString('utf8'));
    } catch {
      return reply(res, 400, 'the body is not valid JSON');
    }
    const parsed = parseEvent(json);
    if (typeof parsed === 'string') return reply(res, 400, `invalid event: ${parsed}`);
    const event: InboundEvent = { ...parsed, metadata: cleanMetadata(parsed) };
    if (!this.#seen.addIfAbsent(dedupeKey(event, event.metadata))) {
      return reply(res, 429, 'duplicate event within the rate-limit interval');
    }
    if (this.#inFlight.size >= (this.#o.maxInFlight ?? 1_000)) {
      return reply(res, 503, 'too many events in flight; retry later');
    }
    reply(res, 202, 'accepted');
    const run = this.#o
      .dispatch(event)
      .catch((err: Error) => this.#o.log.error({ err: err.message }, 'dispatch failed'))
      .finally(() => this.#inFlight.delete(run));
    this.#inFlight.add(run);
  }
}

function reply(res: ServerResponse, status: number, message: string, close = false): void {
  if (res.headersSent) return;
  res.writeHead(status, {
    'content-type': 'text/plain; charset=utf-8',
    ...(close ? { connection: 'close' } : {}),
  });
  res.end(`${message}\n`);
}
