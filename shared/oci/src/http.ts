import http from 'node:http';
import https from 'node:https';
import type { Readable } from 'node:stream';
import tls from 'node:tls';
import { ContentTooLargeError, RegistryUnavailableError } from './errors.ts';

/** TLS material from a certSecretRef: extra CA (added to the system roots) and an optional client pair. */
export interface TlsOptions {
  caCert?: string;
  clientCert?: string;
  clientKey?: string;
}

/** One HTTP exchange's settings, already resolved by the client. */
export interface HttpRequestInit {
  method: 'GET' | 'HEAD' | 'POST' | 'PUT';
  url: URL;
  headers: Record<string, string>;
  body?: Buffer;
  tls?: TlsOptions;
  signal: AbortSignal;
  /** Registry host as the user wrote it, for error messages. */
  host: string;
}

const TLS_TRUST_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/** Turns a socket, TLS or abort failure into a RegistryUnavailableError with one clear sentence. */
export function networkError(
  err: unknown,
  init: Pick<HttpRequestInit, 'host' | 'url' | 'signal'>,
  timeoutMs: number,
): Error {
  const e = err as NodeJS.ErrnoException;
  const code = e?.code ?? '';
  const where = `registry ${init.host}`;
  if (e?.name === 'AbortError' || code === 'ABORT_ERR' || init.signal.aborted) {
    const reason: unknown = init.signal.reason;
    if (reason instanceof Error && reason.name !== 'TimeoutError') return reason; // the caller cancelled
    return new RegistryUnavailableError(`request to ${where} timed out after ${timeoutMs} ms.`, {
      cause: err,
    });
  }
  if (code === 'ECONNREFUSED')
    return new RegistryUnavailableError(`${where} refused the connection.`, { cause: err });
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
    return new RegistryUnavailableError(`${where} could not be resolved (DNS ${code}).`, { cause: err });
  }
  if (TLS_TRUST_CODES.has(code)) {
    return new RegistryUnavailableError(
      `the TLS certificate of ${where} is not trusted (${code}); give its CA certificate in certSecretRef.`,
      { cause: err },
    );
  }
  if (
    code === 'EPROTO' ||
    code.startsWith('ERR_SSL_') ||
    /wrong version number|packet length too long/i.test(e?.message ?? '')
  ) {
    const hint =
      init.url.protocol === 'https:' ? '; if the registry serves plain HTTP, set insecure: true' : '';
    return new RegistryUnavailableError(
      `the TLS handshake with ${where} failed (${code || 'EPROTO'})${hint}.`,
      {
        cause: err,
      },
    );
  }
  return new RegistryUnavailableError(
    `the connection to ${where} failed (${code || e?.message || 'unknown error'}).`,
    {
      cause: err,
    },
  );
}

/** Sends one request and resolves with the response head; the body stream is the caller's to consume. */
export function sendRequest(init: HttpRequestInit): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const secure = init.url.protocol === 'https:';
    const length = init.body?.length ?? (init.method === 'POST' || init.method === 'PUT' ? 0 : undefined);
    const options: https.RequestOptions = {
      method: init.method,
      // An explicit length, so an empty POST is not sent chunked (some registries refuse that).
      headers: length === undefined ? init.headers : { ...init.headers, 'Content-Length': String(length) },
      signal: init.signal,
    };
    if (secure && init.tls?.caCert) options.ca = [...tls.rootCertificates, init.tls.caCert];
    if (secure && init.tls?.clientCert && init.tls.clientKey) {
      options.cert = init.tls.clientCert;
      options.key = init.tls.clientKey;
    }
    const req = (secure ? https : http).request(init.url, options, resolve);
    req.on('error', reject);
    req.end(init.body);
  });
}

/** Reads a whole body, refusing more than `maxBytes` (checked on Content-Length and while reading). */
export async function readBody(res: http.IncomingMessage, maxBytes: number, what: string): Promise<Buffer> {
  const declared = Number(res.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) {
    res.destroy();
    throw new ContentTooLargeError(`${what} is ${declared} bytes, over the limit of ${maxBytes}.`);
  }
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of res as Readable) {
    total += (chunk as Buffer).length;
    if (total > maxBytes) {
      res.destroy();
      throw new ContentTooLargeError(`${what} is over the limit of ${maxBytes} bytes.`);
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** Reads a body for an error message: small, and never fails. */
export async function readErrorBody(res: http.IncomingMessage): Promise<string> {
  try {
    return (await readBody(res, 64 * 1024, 'error body')).toString('utf8');
  } catch {
    return '';
  }
}
