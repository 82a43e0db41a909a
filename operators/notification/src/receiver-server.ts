import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { KubeClient, RuntimeLogger } from '@mooring/runtime';
import { ExpiringSet } from './expiring-set.ts';
import { RateLimiter } from './rate-limiter.ts';
import { BodyTimeoutError, BodyTooLargeError, readBody } from './read-body.ts';
import type { CachedReceiver, ReceiverLookup } from './receiver-cache.ts';
import { receiverProblem } from './receiver-spec.ts';
import { VERIFIERS } from './receivers/index.ts';
import { HOOK_TRAITS } from './receivers/traits.ts';
import type { HookRequest, Verification } from './receivers/types.ts';
import { triggerResources } from './resource-trigger.ts';
import { sourceKey } from './source-address.ts';

/** Flux's receiver body limit. */
export const MAX_HOOK_BYTES = 3 * 1024 * 1024;

/** How long an accepted delivery is remembered, and how many at most. */
export const REPLAY_WINDOW_MS = 10 * 60_000;
export const REPLAY_MAX_ENTRIES = 50_000;

export interface Limit {
  perSecond: number;
  burst: number;
}

export interface ReceiverServerOptions {
  /** Only to annotate the selected resources; nothing is read from the API to answer a request. */
  client: Pick<KubeClient, 'list' | 'mergePatch'>;
  /** Receivers and their tokens, kept current by watches (ReceiverCache). */
  receivers: ReceiverLookup;
  log: RuntimeLogger;
  noCrossNamespaceRefs: boolean;
  maxBodyBytes?: number;
  /** Verified requests one Receiver takes; default 5/s, burst 20. */
  perReceiver?: Limit;
  /** Unverified requests (unknown path, bad signature, replay) one source address makes; default 10/s, burst 40. */
  perSource?: Limit;
  /** Unverified requests from all sources together; default 100/s, burst 400. */
  unverified?: Limit;
  /** Until the request's headers are complete; default 10 s. */
  headersTimeoutMs?: number;
  /** Until the whole request is received (node's requestTimeout); default 30 s. */
  requestTimeoutMs?: number;
  /** Until the body is complete, from the end of the headers; default 10 s. */
  bodyTimeoutMs?: number;
  replayWindowMs?: number;
  replayMaxEntries?: number;
}

/** What one webhook request came to; the HTTP status and a message safe to send back. */
export interface HookOutcome {
  status: number;
  message: string;
  /** Close the connection after answering. */
  close?: boolean;
  headers?: Record<string, string>;
}

/** The deliveries one verified request stands for in the replay cache, keyed per Receiver. */
function replayKeys(entry: CachedReceiver, request: HookRequest): string[] {
  const traits = HOOK_TRAITS[entry.receiver.spec.type];
  const prefix = `${entry.namespace}/${entry.name}`;
  const digest = (s: string | Buffer) => createHash('sha256').update(s).digest('base64');
  const keys: string[] = [];
  for (const name of traits?.deliveryHeaders ?? []) {
    const v = request.headers[name];
    const id = Array.isArray(v) ? v[0] : v;
    if (id) {
      keys.push(`${prefix} delivery ${digest(id)}`);
      break;
    }
  }
  if (traits?.bodyIsUnique) keys.push(`${prefix} body ${digest(request.body)}`);
  return keys;
}

/**
 * The webhook server of Receivers (`--receiver-addr`). A request is authenticated before it can
 * cost anything that others share: one Map lookup finds the Receiver and its token in the
 * watch-fed cache (404 when the path is unknown), a request without its sender's signature header
 * is refused without reading the body (401), the body is read within a size limit (413) and a
 * deadline (408), and the signature is checked in constant time (401). Only then is a token taken
 * from the Receiver's bucket (429), so unsigned traffic, however much of it, never makes a signed
 * webhook answer 429; what fails is counted per source address and globally instead, and past
 * those limits answered 429 with the connection closed and nothing logged. A delivery accepted in
 * the last ten minutes is not triggered again. Nothing a request carries reaches a log or an
 * answer, and no payload can throw out of the handler.
 */
export class ReceiverServer {
  readonly #o: ReceiverServerOptions;
  readonly #server: Server;
  readonly #perReceiver: RateLimiter;
  readonly #perSource: RateLimiter;
  readonly #unverified: RateLimiter;
  readonly #delivered: ExpiringSet;
  readonly #bodyTimeoutMs: number;

  constructor(options: ReceiverServerOptions) {
    this.#o = options;
    const pr = options.perReceiver ?? { perSecond: 5, burst: 20 };
    const ps = options.perSource ?? { perSecond: 10, burst: 40 };
    const pu = options.unverified ?? { perSecond: 100, burst: 400 };
    this.#perReceiver = new RateLimiter(pr.perSecond, pr.burst);
    this.#perSource = new RateLimiter(ps.perSecond, ps.burst);
    this.#unverified = new RateLimiter(pu.perSecond, pu.burst, { maxKeys: 1 });
    this.#delivered = new ExpiringSet(
      options.replayWindowMs ?? REPLAY_WINDOW_MS,
      options.replayMaxEntries ?? REPLAY_MAX_ENTRIES,
    );
    this.#bodyTimeoutMs = options.bodyTimeoutMs ?? 10_000;
    const headersTimeout = options.headersTimeoutMs ?? 10_000;
    this.#server = createServer(
      {
        headersTimeout,
        // node refuses a request timeout shorter than the header timeout.
        requestTimeout: Math.max(headersTimeout, options.requestTimeoutMs ?? 30_000),
        // Node checks both timeouts only this often (30 s by default), which is how a thousand
        // slow connections outlived a 10 s header timeout.
        connectionsCheckingInterval: Math.max(10, Math.min(1_000, Math.floor(headersTimeout / 4))),
        maxHeaderSize: 16 * 1024,
      },
      (req, res) => {
        this.#handle(req)
          .then((o) => reply(res, o))
          .catch((err: Error) => {
            this.#o.log.error({ err: err.name }, 'webhook request failed');
            reply(res, { status: 500, message: 'internal error' });
          });
      },
    );
    // A client that sends garbage below HTTP, or too slowly, gets an answer and a closed socket.
    this.#server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
      const answer = err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? '408 Request Timeout' : '400 Bad Request';
      if (socket.writable)
        socket.end(`HTTP/1.1 ${answer}\r\nconnection: close\r\n\r\n`, () => socket.destroy());
      else socket.destroy();
    });
  }

  /** Listens on `port` (0 picks one) and `host`; resolves to the bound port. */
  listen(port: number, host?: string): Promise<number> {
    return new Promise((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen(port, host, () => resolve((this.#server.address() as AddressInfo).port));
    });
  }

  close(): Promise<void> {
    return new Promise((r) => {
      this.#server.close(() => r());
      this.#server.closeAllConnections();
    });
  }

  async #handle(req: IncomingMessage): Promise<HookOutcome> {
    const source = sourceKey(req.socket.remoteAddress);
    if (!this.#o.receivers.synced()) {
      req.resume();
      return { status: 503, message: 'starting', headers: { 'retry-after': '1' } };
    }
    const path = (req.url ?? '').split('?')[0] ?? '';
    const entry = this.#o.receivers.lookup(path);
    if (!entry) return this.#refuse(req, source, { status: 404, message: 'not found' });
    if (req.method !== 'POST')
      return this.#refuse(req, source, {
        status: 405,
        message: 'only POST is accepted',
        headers: { allow: 'POST' },
      });
    const { receiver, token } = entry;
    if (receiver.spec.suspend)
      return this.#refuse(req, source, { status: 503, message: 'the receiver is suspended' });
    const verify = VERIFIERS[receiver.spec.type];
    const traits = HOOK_TRAITS[receiver.spec.type];
    if (!verify || !traits || receiverProblem(receiver, this.#o))
      return this.#refuse(req, source, { status: 503, message: 'the receiver is not ready' });
    // Refused before the body is read: a request without its sender's signature header, and one
    // whose proof is a header token that does not match.
    if (traits.signatureHeaders.length > 0 && !traits.signatureHeaders.some((h) => req.headers[h]))
      return this.#refuse(req, source, {
        status: 401,
        message: `the request has no ${traits.signatureHeaders.join(' or ')} header`,
      });
    if (traits.headerOnly) {
      const early = verify({ headers: req.headers, body: Buffer.alloc(0) }, token);
      if (!early.ok) return this.#refuse(req, source, { status: early.status, message: early.message });
    }
    let body: Buffer;
    try {
      body = await readBody(req, this.#o.maxBodyBytes ?? MAX_HOOK_BYTES, this.#bodyTimeoutMs);
    } catch (err) {
      if (err instanceof BodyTooLargeError)
        return this.#refuse(req, source, { status: 413, message: err.message, close: true });
      if (err instanceof BodyTimeoutError)
        return this.#refuse(req, source, { status: 408, message: err.message, close: true });
      return this.#refuse(req, source, { status: 400, message: 'the request body could not be read' });
    }
    const request = { headers: req.headers, body };
    const verdict = verify(request, token);
    if (!verdict.ok) return this.#refuse(req, source, { status: verdict.status, message: verdict.message });
    return this.#accept(entry, request, verdict, source);
  }

  /**
   * An unverified request: answered as it deserves while its source and the server as a whole are
   * within their limits, else 429 and the connection closed. Never reached by a verified request,
   * so a flood counted here cannot refuse a signed webhook, even one from the same address (behind
   * an ingress every request has the same one).
   */
  #refuse(req: IncomingMessage, source: string, o: HookOutcome): HookOutcome {
    req.resume();
    return this.#unverifiedAnswer(source, o);
  }

  #unverifiedAnswer(source: string, o: HookOutcome): HookOutcome {
    if (!this.#perSource.tryTake(source) || !this.#unverified.tryTake(''))
      return { status: 429, message: 'too many failed requests', close: true };
    if (o.status === 401) this.#o.log.info({ status: o.status }, 'webhook refused: signature check failed');
    return o;
  }

  async #accept(
    entry: CachedReceiver,
    request: HookRequest,
    verdict: Extract<Verification, { ok: true }>,
    source: string,
  ): Promise<HookOutcome> {
    const { receiver } = entry;
    const key = `${entry.namespace}/${entry.name}`;
    const log = this.#o.log.child({ receiver: key });
    // A replay is answered 200, not 409: the delivery it repeats was accepted and its reconcile
    // requested, so the sender's intent is met, and a host retrying or redelivering (GitHub keeps
    // the delivery ID on a redelivery) must not record a failure; GitLab disables a hook that keeps
    // failing. It triggers nothing, costs the Receiver's bucket nothing (so a captured request
    // replayed in a loop cannot starve the real ones) and counts as unverified.
    const keys = replayKeys(entry, request);
    if (keys.some((k) => this.#delivered.has(k))) {
      const o = this.#unverifiedAnswer(source, {
        status: 200,
        message: 'this delivery was already accepted: nothing to do',
      });
      if (o.status === 200) log.info({}, 'webhook ignored: a delivery already accepted');
      return o;
    }
    if (!this.#perReceiver.tryTake(key))
      return { status: 429, message: 'too many requests for this receiver' };
    // A ping proves the hook is wired up; it is answered whatever the events filter says.
    if (verdict.ignore) return { status: 200, message: `${verdict.ignore}: nothing to do` };
    const allowed = receiver.spec.events ?? [];
    if (allowed.length > 0 && verdict.event !== undefined) {
      const event = verdict.event.toLowerCase();
      if (!allowed.some((e) => e.toLowerCase() === event))
        return { status: 400, message: 'the event type is not accepted by this receiver' };
    }
    // Recorded before the first await, so two copies sent at once trigger once; forgotten again
    // when triggering fails, so the sender's retry is not taken for a replay.
    for (const k of keys) this.#delivered.addIfAbsent(k);
    try {
      const done = await triggerResources(this.#o.client, receiver, {
        noCrossNamespaceRefs: this.#o.noCrossNamespaceRefs,
      });
      log.info({ triggered: done.map((d) => `${d.kind}/${d.namespace}/${d.name}`) }, 'webhook accepted');
      return {
        status: 200,
        message: `${done.length} resource${done.length === 1 ? '' : 's'} asked to reconcile`,
      };
    } catch (err) {
      for (const k of keys) this.#delivered.delete(k);
      log.warn({ err: (err as Error).message }, 'webhook accepted but triggering failed');
      return { status: 500, message: 'triggering the resources failed' };
    }
  }
}

function reply(res: ServerResponse, o: HookOutcome): void {
  if (res.headersSent) return;
  res.writeHead(o.status, {
    'content-type': 'text/plain; charset=utf-8',
    ...o.headers,
    ...(o.close ? { connection: 'close' } : {}),
  });
  res.end(`${o.message}\n`);
}
