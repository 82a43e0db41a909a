import http from 'node:http';
import https from 'node:https';
import type { Readable } from 'node:stream';
import tls from 'node:tls';

/** How a chart repository is authenticated: basic auth or a bearer token, and TLS material. */
export interface HelmAuth {
  basic?: { username: string; password: string };
  bearerToken?: string;
}

export interface HelmTls {
  caCert?: string;
  clientCert?: string;
  clientKey?: string;
}

export interface HttpGetOptions {
  auth?: HelmAuth;
  tls?: HelmTls;
  maxBytes: number;
  signal: AbortSignal;
  /** What is fetched, for messages (`index.yaml`, `chart tiny-1.0.0`). */
  what: string;
}

/** The server answered with a status other than 200; `status` tells 401/403 from the rest. */
export class HttpStatusError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.name = 'HttpStatusError';
    this.status = status;
  }
}

/** More bytes than allowed, declared or read. */
export class TooLargeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TooLargeError';
  }
}

/** A URL without its credentials, query or fragment, for messages. */
export function redact(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname}`;
}

function authHeader(auth: HelmAuth | undefined): Record<string, string> {
  if (auth?.bearerToken) return { Authorization: `Bearer ${auth.bearerToken}` };
  if (auth?.basic) {
    const pair = `${auth.basic.username}:${auth.basic.password}`;
    return { Authorization: `Basic ${Buffer.from(pair).toString('base64')}` };
  }
  return {};
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const MAX_REDIRECTS = 10;

class Redirect {
  readonly location: string;
  constructor(location: string) {
    this.location = location;
  }
}

/**
 * GETs `url` into memory, at most `maxBytes`; a status other than 200 is an HttpStatusError.
 * Redirects are followed (chart URLs often point at release downloads that redirect to a CDN), at
 * most 10, to http(s) only; the credentials go along only while the host stays the one first asked,
 * unless `passCredentials`.
 */
export async function httpGet(
  url: URL,
  options: HttpGetOptions & { passCredentials?: boolean },
): Promise<Buffer> {
  let current = url;
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    const auth = options.passCredentials || current.host === url.host ? options.auth : undefined;
    const got = await getOnce(current, { ...options, auth });
    if (!(got instanceof Redirect)) return got;
    const next = URL.parse(got.location, current.href);
    if (!next || (next.protocol !== 'http:' && next.protocol !== 'https:')) {
      throw new Error(
        `GET ${redact(current)} for ${options.what} redirects to a location that is not http(s)`,
      );
    }
    if (current.protocol === 'https:' && next.protocol === 'http:') {
      throw new Error(`GET ${redact(current)} for ${options.what} redirects from https to plain http`);
    }
    current = next;
  }
  throw new Error(`GET ${redact(url)} for ${options.what}: more than ${MAX_REDIRECTS} redirects`);
}

function getOnce(url: URL, options: HttpGetOptions): Promise<Buffer | Redirect> {
  return new Promise((resolve, reject) => {
    const secure = url.protocol === 'https:';
    const requestOptions: https.RequestOptions = {
      method: 'GET',
      headers: { 'User-Agent': 'mooring-source', Accept: '*/*', ...authHeader(options.auth) },
      signal: options.signal,
    };
    if (secure && options.tls?.caCert) requestOptions.ca = [...tls.rootCertificates, options.tls.caCert];
    if (secure && options.tls?.clientCert && options.tls.clientKey) {
      requestOptions.cert = options.tls.clientCert;
      requestOptions.key = options.tls.clientKey;
    }
    const req = (secure ? https : http).request(url, requestOptions, (res) => {
      const status = res.statusCode ?? 0;
      const location = res.headers.location;
      if (REDIRECTS.has(status) && location) {
        res.resume();
        resolve(new Redirect(location));
        return;
      }
      if (status !== 200) {
        res.resume();
        reject(
          new HttpStatusError(
            status,
            `GET ${redact(url)} for ${options.what}: ${status} ${res.statusMessage ?? ''}`.trimEnd(),
          ),
        );
        return;
      }
      const declared = Number(res.headers['content-length']);
      if (Number.isFinite(declared) && declared > options.maxBytes) {
        res.destroy();
        reject(
          new TooLargeError(`${options.what} is ${declared} bytes, over the ${options.maxBytes}-byte limit`),
        );
        return;
      }
      const chunks: Buffer[] = [];
      let total = 0;
      (async () => {
        for await (const chunk of res as Readable) {
          total += (chunk as Buffer).length;
          if (total > options.maxBytes) {
            res.destroy();
            throw new TooLargeError(`${options.what} is over the ${options.maxBytes}-byte limit`);
          }
          chunks.push(chunk as Buffer);
        }
        return Buffer.concat(chunks);
      })().then(resolve, reject);
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (options.signal.aborted) {
        reject(new Error(`GET ${redact(url)} for ${options.what} timed out or was cancelled`));
        return;
      }
      reject(new Error(`GET ${redact(url)} for ${options.what} failed: ${err.code ?? err.message}`));
    });
    req.end();
  });
}
