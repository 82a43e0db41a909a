import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { NOTIFICATION_API_VERSION, type Receiver } from '@mooring/api';
import { ApiError, type KubeClient, type RuntimeLogger } from '@mooring/runtime';
import { RateLimiter } from './rate-limiter.ts';
import { BodyTooLargeError, readBody } from './read-body.ts';
import type { ReceiverIndex } from './receiver-index.ts';
import { VERIFIERS } from './receivers/index.ts';
import { triggerResources } from './resource-trigger.ts';
import { readSecret } from './secrets.ts';
import { webhookPath } from './webhook-path.ts';

/** Flux's receiver body limit. */
export const MAX_HOOK_BYTES = 3 * 1024 * 1024;

export interface ReceiverServerOptions {
  client: Pick<KubeClient, 'get' | 'list' | 'mergePatch'>;
  index: ReceiverIndex;
  log: RuntimeLogger;
  noCrossNamespaceRefs: boolean;
  maxBodyBytes?: number;
  /** Requests per second (and burst) one Receiver takes; default 5/s, burst 20. */
  perReceiver?: { perSecond: number; burst: number };
  /** Requests per second (and burst) one client address makes, to any path; default 10/s, burst 40. */
  perClient?: { perSecond: number; burst: number };
  headersTimeoutMs?: number;
  requestTimeoutMs?: number;
}

/** What one webhook request came to; the HTTP status and a message safe to send back. */
export interface HookOutcome {
  status: number;
  message: string;
}

const isReady = (r: Receiver) =>
  r.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

/**
 * The webhook server of Receivers (`--receiver-addr`): per-client and per-Receiver token buckets
 * (429), one Map lookup for the path (404, the same work whether or not it exists), a body limit
 * (413), the sender's signature checked in constant time (401), the event filter (400), then the
 * requestedAt annotation on every selected resource (200). Nothing a request carries reaches a
 * log or an answer, and no payload can throw out of the handler.
 */
export class ReceiverServer {
  readonly #o: ReceiverServerOptions;
  readonly #server: Server;
  readonly #perReceiver: RateLimiter;
  readonly #perClient: RateLimiter;

  constructor(options: ReceiverServerOptions) {
    this.#o = options;
    const pr = options.perReceiver ?? { perSecond: 5, burst: 20 };
    const pc = options.perClient ?? { perSecond: 10, burst: 40 };
    this.#perReceiver = new RateLimiter(pr.perSecond, pr.burst);
    this.#perClient = new RateLimiter(pc.perSecond, pc.burst);
    this.#server = createServer(
      {
        headersTimeout: options.headersTimeoutMs ?? 10_000,
        requestTimeout: options.requestTimeoutMs ?? 30_000,
        maxHeaderSize: 16 * 1024,
      },
      (req, res) => {
        this.#handle(req, res)
          .then((o) => reply(res, o))
          .catch((err: Error) => {
            this.#o.log.error({ err: err.name }, 'webhook request failed');
            reply(res, { status: 500, message: 'internal error' });
          });
      },
    );
    // A client that sends garbage below HTTP gets a 400 and a closed socket, not a crash.
    this.#server.on('clientError', (_err, socket) => {
      if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n');
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

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<HookOutcome & { close?: boolean }> {
    const client = req.socket.remoteAddress ?? 'unknown';
    if (!this.#perClient.tryTake(client)) {
      req.resume();
      return { status: 429, message: 'too many requests' };
    }
    const path = (req.url ?? '').split('?')[0] ?? '';
    const ref = this.#o.index.lookup(path);
    if (!ref) {
      req.resume();
      return { status: 404, message: 'not found' };
    }
    if (req.method !== 'POST') {
      req.resume();
      res.setHeader('allow', 'POST');
      return { status: 405, message: 'only POST is accepted' };
    }
    if (!this.#perReceiver.tryTake(`${ref.namespace}/${ref.name}`)) {
      req.resume();
      return { status: 429, message: 'too many requests for this receiver' };
    }
    let body: Buffer;
    try {
      body = await readBody(req, this.#o.maxBodyBytes ?? MAX_HOOK_BYTES);
    } catch (err) {
      if (err instanceof BodyTooLargeError) return { status: 413, message: err.message, close: true };
      return { status: 400, message: 'the request body could not be read' };
    }
    return this.process(path, ref, { headers: req.headers, body });
  }

  /** The part of a request after the body is read; public so fuzz tests can drive it without sockets. */
  async process(
    path: string,
    ref: { namespace: string; name: string },
    request: { headers: IncomingMessage['headers']; body: Buffer },
  ): Promise<HookOutcome> {
    const log = this.#o.log.child({ receiver: `${ref.namespace}/${ref.name}` });
    let receiver: Receiver;
    try {
      receiver = await this.#o.client.get<Receiver>({
        apiVersion: NOTIFICATION_API_VERSION,
        kind: 'Receiver',
        namespace: ref.namespace,
        name: ref.name,
      });
    } catch (err) {
      if (err instanceof ApiError && err.isNotFound) {
        this.#o.index.delete(ref);
        return { status: 404, message: 'not found' };
      }
      throw err;
    }
    if (receiver.status?.webhookPath !== path) return { status: 404, message: 'not found' };
    if (receiver.spec.suspend || !isReady(receiver))
      return { status: 503, message: 'the receiver is suspended or not ready' };
    const verify = VERIFIERS[receiver.spec.type];
    if (!verify || !receiver.spec.secretRef) return { status: 503, message: 'the receiver is not ready' };
    let token: string;
    try {
      token = (await readSecret(this.#o.client, ref.namespace, receiver.spec.secretRef.name)).token ?? '';
    } catch {
      return { status: 503, message: 'the receiver is not ready' };
    }
    // The path proves knowledge of the current token: after a rotation the old path stops working.
    if (!token || webhookPath(token, ref.name, ref.namespace) !== path)
      return { status: 404, message: 'not found' };
    const verdict = verify(request, token);
    if (!verdict.ok) {
      log.info({ status: verdict.status }, 'webhook refused: signature check failed');
      return { status: verdict.status, message: verdict.message };
    }
    // A ping proves the hook is wired up; it is answered whatever the events filter says.
    if (verdict.ignore) return { status: 200, message: `${verdict.ignore}: nothing to do` };
    const allowed = receiver.spec.events ?? [];
    if (allowed.length > 0 && verdict.event !== undefined) {
      const event = verdict.event.toLowerCase();
      if (!allowed.some((e) => e.toLowerCase() === event))
        return { status: 400, message: 'the event type is not accepted by this receiver' };
    }
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
      log.warn({ err: (err as Error).message }, 'webhook accepted but triggering failed');
      return { status: 500, message: 'triggering the resources failed' };
    }
  }
}

function reply(res: ServerResponse, o: HookOutcome & { close?: boolean }): void {
  if (res.headersSent) return;
  res.writeHead(o.status, {
    'content-type': 'text/plain; charset=utf-8',
    ...(o.close ? { connection: 'close' } : {}),
  });
  res.end(`${o.message}\n`);
}
