import http from 'node:http';
import https from 'node:https';
import { KubeConfig } from './kube-config.ts';
import { KubeCredentials } from './kube-credentials.ts';
import type { ApiTransport, TransportRequest, TransportResponse, TransportStream } from './transport.ts';

// Tokens from exec plugins and projected service-account files rotate; re-read them this often.
const AUTH_REFRESH_MS = 30_000;

/**
 * Loads the operator's own kubeconfig: the given file, else $KUBECONFIG, else ~/.kube/config, else
 * in-cluster. Never for a kubeconfig someone else wrote: that goes through parseUntrustedKubeConfig.
 */
export function loadKubeConfig(path?: string): KubeConfig {
  const kc = new KubeConfig();
  if (path) kc.loadFromFile(path);
  else kc.loadFromDefault();
  return kc;
}

/**
 * Talks to the API server over node:https with the kubeconfig's TLS material and credentials
 * (kube-credentials.ts); requests and responses stay raw JSON.
 */
export class HttpsTransport implements ApiTransport {
  readonly server: URL;
  readonly #credentials: KubeCredentials;
  readonly #agent: http.Agent;
  #auth: { headers: Record<string, string | string[]>; at: number } | undefined;

  private constructor(credentials: KubeCredentials, server: URL, agent: http.Agent) {
    this.#credentials = credentials;
    this.server = server;
    this.#agent = agent;
  }

  static async create(kc: KubeConfig): Promise<HttpsTransport> {
    const credentials = new KubeCredentials(kc);
    const server = new URL(credentials.cluster.server);
    const tls = await credentials.tls();
    const agent =
      server.protocol === 'http:'
        ? new http.Agent({ keepAlive: true, maxSockets: 64 })
        : new https.Agent({ keepAlive: true, maxSockets: 64, ...tls });
    const transport = new HttpsTransport(credentials, server, agent);
    // A token file or plugin that cannot be read fails here, at start, not on the first request.
    await transport.#authHeaders();
    return transport;
  }

  async #authHeaders(): Promise<Record<string, string | string[]>> {
    const now = Date.now();
    if (this.#auth && now - this.#auth.at < AUTH_REFRESH_MS) return this.#auth.headers;
    const headers = await this.#credentials.headers();
    this.#auth = { headers, at: now };
    return headers;
  }

  async #open(req: TransportRequest): Promise<http.IncomingMessage> {
    let auth = await this.#authHeaders();
    // A request that impersonates (a Kustomization's service account) replaces the kubeconfig's own.
    if (req.headers['Impersonate-User'] !== undefined)
      auth = Object.fromEntries(Object.entries(auth).filter(([k]) => !k.startsWith('Impersonate-')));
    const url = new URL(req.path, this.server);
    const mod = url.protocol === 'http:' ? http : https;
    return new Promise((resolve, reject) => {
      const r = mod.request(
        url,
        {
          method: req.method,
          agent: this.#agent,
          // An explicit length: Go's server can misread the next request on a kept-alive
          // connection after a chunked body it did not consume (a DELETE's options, say).
          headers: {
            Accept: 'application/json',
            ...auth,
            ...req.headers,
            ...(req.body === undefined ? {} : { 'Content-Length': String(Buffer.byteLength(req.body)) }),
          },
          signal: req.signal,
          timeout: req.timeoutMs,
        },
        resolve,
      );
      r.on('error', reject);
      r.on('timeout', () =>
        r.destroy(new Error(`${req.method} ${req.path}: no response within ${req.timeoutMs} ms`)),
      );
      r.end(req.body);
    });
  }

  async send(req: TransportRequest): Promise<TransportResponse> {
    const res = await this.#open(req);
    const chunks: Buffer[] = [];
    for await (const chunk of res) chunks.push(chunk as Buffer);
    return { statusCode: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') };
  }

  async openStream(req: TransportRequest): Promise<TransportStream> {
    const res = await this.#open(req);
    return { statusCode: res.statusCode ?? 0, body: res };
  }

  close(): void {
    this.#agent.destroy();
  }
}
