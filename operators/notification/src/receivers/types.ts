import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/** A webhook request as a verifier sees it: lower-case header names, the raw body. */
export interface HookRequest {
  headers: Readonly<Record<string, string | string[] | undefined>>;
  body: Buffer;
}

/** The result of checking a request: who sent it is proven (with its event type), or why not. */
export type Verification =
  | { ok: true; event?: string; ignore?: string }
  | { ok: false; status: 400 | 401; message: string };

/** Checks one request against the Receiver's token; pure, never throws. */
export type Verifier = (req: HookRequest, token: string) => Verification;

/** The first value of a header, or undefined. */
export function header(req: HookRequest, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** Equality that takes the same time wherever the strings differ: both sides are hashed to equal length first. */
export function safeEqual(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb);
}

/** Hex HMAC of the body. */
export function hmacHex(algorithm: 'sha1' | 'sha256' | 'sha512', key: string, body: Buffer): string {
  return createHmac(algorithm, key).update(body).digest('hex');
}

/** Checks `<alg>=<hex>` against the body's HMAC for the algorithms allowed. */
export function checkPrefixedHmac(
  value: string | undefined,
  token: string,
  body: Buffer,
  allowed: readonly ('sha1' | 'sha256' | 'sha512')[],
): boolean {
  if (!value) return false;
  const eq = value.indexOf('=');
  if (eq < 1) return false;
  const alg = value.slice(0, eq).toLowerCase();
  const hex = value.slice(eq + 1).toLowerCase();
  const algorithm = allowed.find((a) => a === alg);
  if (!algorithm) return false;
  return safeEqual(hmacHex(algorithm, token, body), hex);
}

export const unauthorized = (message: string): Verification => ({ ok: false, status: 401, message });

/** Parses a JSON body without throwing; undefined when it is not JSON. */
export function tryJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
}
