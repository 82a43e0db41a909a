import type { IncomingMessage } from 'node:http';

/** The body was larger than allowed. */
export class BodyTooLargeError extends Error {
  constructor(limit: number) {
    super(`the request body is larger than ${limit} bytes`);
    this.name = 'BodyTooLargeError';
  }
}

/** The body did not arrive in time (a slow client holding the connection open). */
export class BodyTimeoutError extends Error {
  constructor(timeoutMs: number) {
    super(`the request body did not arrive within ${timeoutMs} ms`);
    this.name = 'BodyTimeoutError';
  }
}

/**
 * Reads a request body up to `limit` bytes; rejects with BodyTooLargeError as soon as the declared
 * or received length passes it, without buffering the rest, and with BodyTimeoutError when the
 * whole body has not arrived `timeoutMs` after the read started. The deadline is a timer of its
 * own: node's requestTimeout is only checked every connectionsCheckingInterval.
 */
export function readBody(req: IncomingMessage, limit: number, timeoutMs?: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? '0');
    if (declared > limit) {
      req.resume();
      reject(new BodyTooLargeError(limit));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const timer =
      timeoutMs === undefined
        ? undefined
        : setTimeout(() => finish(new BodyTimeoutError(timeoutMs)), timeoutMs);
    const finish = (err: Error | undefined) => {
      if (done) return;
      done = true;
      if (timer) clearTimeout(timer);
      if (err) {
        // Keep reading into nothing so an answer can still be written on this connection.
        req.resume();
        reject(err);
      } else resolve(Buffer.concat(chunks));
    };
    req.on('data', (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > limit) {
        finish(new BodyTooLargeError(limit));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => finish(undefined));
    req.on('error', (err) => finish(err));
    req.on('close', () => finish(new Error('the connection closed before the body was complete')));
  });
}
