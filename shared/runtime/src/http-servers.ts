import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { formatListenAddress, type ListenAddress, parseListenAddress } from './listen-address.ts';
import type { Metrics } from './metrics.ts';

/** A probe: true when the check passes. A throw counts as failing, with its message in the body. */
export type Probe = () => boolean | Promise<boolean>;

export interface HttpServersOptions {
  /** `--metrics-addr`, e.g. `:8080`; port 0 binds a free port. */
  metricsAddr: string;
  /** `--health-addr`, e.g. `:9440`; the same address as metrics serves all paths from one server. */
  healthAddr: string;
  metrics: Pick<Metrics, 'render' | 'contentType'>;
  /** `/readyz`: true once the informers have synced. */
  ready: Probe;
  /** `/healthz`: true while the process works; always true when absent. */
  healthy?: Probe;
}

/** The ports actually bound (differs from the flags when they asked for port 0). */
export interface BoundPorts {
  metrics: number;
  health: number;
}

type Handler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

function reply(
  res: ServerResponse,
  status: number,
  body: string,
  contentType = 'text/plain; charset=utf-8',
): void {
  res.writeHead(status, { 'Content-Type': contentType, 'Cache-Control': 'no-store' });
  res.end(body);
}

async function probe(check: Probe, failStatus: number, name: string, res: ServerResponse): Promise<void> {
  try {
    if (await check()) reply(res, 200, 'ok\n');
    else reply(res, failStatus, `${name} check failed\n`);
  } catch (err) {
    reply(res, failStatus, `${name} check failed: ${(err as Error).message}\n`);
  }
}

/** The operator's `/metrics` server and its `/healthz` + `/readyz` server. */
export class HttpServers {
  readonly #options: HttpServersOptions;
  readonly #servers: Server[] = [];

  constructor(options: HttpServersOptions) {
    this.#options = options;
    // Validate now, so a bad flag fails at start-up rather than at listen.
    parseListenAddress(options.metricsAddr);
    parseListenAddress(options.healthAddr);
  }

  /** Binds both addresses; rejects naming the address when one cannot be bound. */
  async start(): Promise<BoundPorts> {
    if (this.#servers.length > 0) throw new Error('HTTP servers already started');
    const metricsAddr = parseListenAddress(this.#options.metricsAddr);
    const healthAddr = parseListenAddress(this.#options.healthAddr);
    const metrics: Record<string, Handler> = { '/metrics': (_req, res) => this.#serveMetrics(res) };
    const health: Record<string, Handler> = {
      '/healthz': (_req, res) => probe(this.#options.healthy ?? (() => true), 500, 'healthz', res),
      '/readyz': (_req, res) => probe(this.#options.ready, 503, 'readyz', res),
    };
    try {
      if (metricsAddr.port !== 0 && sameAddress(metricsAddr, healthAddr)) {
        const port = await this.#listen(metricsAddr, { ...metrics, ...health }, 'metrics and health');
        return { metrics: port, health: port };
      }
      const metricsPort = await this.#listen(metricsAddr, metrics, 'metrics');
      const healthPort = await this.#listen(healthAddr, health, 'health');
      return { metrics: metricsPort, health: healthPort };
    } catch (err) {
      await this.close();
      throw err;
    }
  }

  /** Stops listening and drops open connections. */
  async close(): Promise<void> {
    const servers = this.#servers.splice(0);
    await Promise.all(
      servers.map(
        (server) =>
          new Promise<void>((resolve) => {
            server.close(() => resolve());
            server.closeAllConnections();
          }),
      ),
    );
  }

  async #serveMetrics(res: ServerResponse): Promise<void> {
    try {
      const body = await this.#options.metrics.render();
      reply(res, 200, body, this.#options.metrics.contentType);
    } catch (err) {
      reply(res, 500, `collecting metrics failed: ${(err as Error).message}\n`);
    }
  }

  #listen(addr: ListenAddress, routes: Record<string, Handler>, what: string): Promise<number> {
    const server = createServer((req, res) => {
      const path = (req.url ?? '/').split('?')[0]!;
      const handler = Object.hasOwn(routes, path) ? routes[path] : undefined;
      if (!handler) return reply(res, 404, 'not found\n');
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.setHeader('Allow', 'GET, HEAD');
        return reply(res, 405, 'method not allowed\n');
      }
      void handler(req, res);
    });
    return new Promise((resolve, reject) => {
      const onError = (err: Error) =>
        reject(new Error(`cannot listen on ${formatListenAddress(addr)} for ${what}: ${err.message}`));
      server.once('error', onError);
      server.listen({ host: addr.host, port: addr.port }, () => {
        server.off('error', onError);
        this.#servers.push(server);
        resolve((server.address() as AddressInfo).port);
      });
    });
  }
}

function sameAddress(a: ListenAddress, b: ListenAddress): boolean {
  return a.port === b.port && a.host === b.host;
}
