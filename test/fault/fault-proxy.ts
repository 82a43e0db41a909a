// A switchable HTTP proxy on loopback, put between an operator and a server it depends on (the Git
// server, the artifact server) so a test can make that server refuse connections, answer 500 or
// hang, and then recover, without touching the real server.
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type FaultMode = 'pass' | 'refuse' | 'error500' | 'hang';

export class FaultProxy {
  mode: FaultMode = 'pass';
  /** Requests seen in each mode, so a test can tell its fault was really met. */
  readonly seen: Record<FaultMode, number> = { pass: 0, refuse: 0, error500: 0, hang: 0 };
  readonly #server: http.Server;
  readonly #sockets = new Set<Socket>();
  readonly #target: URL;

  private constructor(target: URL) {
    this.#target = target;
    this.#server = http.createServer((req, res) => this.#handle(req, res));
    this.#server.on('connection', (socket) => {
      this.#sockets.add(socket);
      socket.on('close', () => this.#sockets.delete(socket));
    });
  }

  /** Starts a proxy to `target` (an http:// origin) on a free loopback port. */
  static async start(target: string): Promise<FaultProxy> {
    const proxy = new FaultProxy(new URL(target));
    await new Promise<void>((resolve) => proxy.#server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  get port(): number {
    return (this.#server.address() as AddressInfo).port;
  }

  /** `host:port` of the proxy. */
  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  /** Switches the mode; leaving `hang` also ends the hanging requests, as a server restart would. */
  set(mode: FaultMode): void {
    if (this.mode === 'hang' && mode !== 'hang') for (const s of this.#sockets) s.destroy();
    this.mode = mode;
  }

  #handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const mode = this.mode;
    this.seen[mode]++;
    if (mode === 'refuse') {
      req.socket.destroy();
      return;
    }
    if (mode === 'error500') {
      res.writeHead(500, { 'content-type': 'text/plain' }).end('injected fault');
      return;
    }
    if (mode === 'hang') return;
    const upstream = http.request(
      {
        host: this.#target.hostname,
        port: this.#target.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: this.#target.host },
      },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  }

  async close(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}
