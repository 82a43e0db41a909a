import http from 'node:http';
import https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import { newKubeConfig } from './kube-config-class.ts';
import type { ApiTransport, TransportRequest, TransportResponse, TransportStream } from './transport.ts';

// Tokens from exec plugins and projected service-account files rotate; re-read them this often.
const AUTH_REFRESH_MS = 30_000;

/**
 * Loads the operator's own kubeconfig: the given file, else $KUBECONFIG, else ~/.kube/config, else
 * in-cluster. Never for a kubeconfig someone else wrote: that goes through parseUntrustedKubeConfig.
 */
export function loadKubeConfig(path?: string): KubeConfig {
  const kc = newKubeConfig();
  if (path) kc.loadFromFile(path);
  else kc.loadFromDefault();
  return kc;
}

/**
 * Talks to the API server over node:https with the kubeconfig's TLS material and credentials.
 * @kubernetes/client-node is used only to read the kubeconfig and produce auth; requests and
 * responses stay raw JSON so no field is dropped by its typed models.
 */
export class HttpsTransport implements ApiTransport {
  readonly server: URL;
  readonly #kc: KubeConfig;
  readonly #agent: http.Agent;
  #auth: { headers: Record<string, string>; at: number } | undefined;

  private constructor(kc: KubeConfig, server: URL, agent: http.Agent) {
    this.#kc = kc;
    this.server = server;
    this.#agent = agent;
  }

  static async create(kc: KubeConfig): Promise<HttpsTransport> {
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error('kubeconfig has no current cluster');
    const server = new URL(cluster.server);
    const tls: https.RequestOptions = {};
    await kc.applyToHTTPSOptions(tls);
    const agent =
      server.protocol === 'http:'
        ? new http.Agent({ keepAlive: true, maxSockets: 64 })
        : new https.Agent({
            keepAlive: true,
            maxSockets: 64,
            ca: tls.ca,
            cert: tls.cert,
            key: tls.key,
            servername: tls.servername,
            ...(tls.rejectUnauthorized === undefined ? {} : { rejectUnauthorized: tls.rejectUnauthorized }),
          });
    return new HttpsTransport(kc, server, agent);
  }

  async #authHeaders(): Promise<Record<string, string>> {
    const now = Date.now();
    if (this.#auth && now - this.#auth.at < AUTH_REFRESH_MS) return this.#auth.headers;
    const opts: https.RequestOptions = {};
    await this.#kc.applyToHTTPSOptions(opts);
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(opts.headers ?? {})) if (typeof v === 'string') headers[k] = v;
    if (opts.auth) headers.Authorization = `Basic ${Buffer.from(opts.auth).toString('base64')}`;
    this.#auth = { headers, at: now };
    return headers;
  }

  async #open(req: TransportRequest): Promise<http.IncomingMessage> {
    const auth = await this.#authHeaders();
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
