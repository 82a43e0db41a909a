import { createHmac } from 'node:crypto';
import { generic } from './generic.ts';
import type { PayloadBuilder } from './types.ts';

/** `X-Signature: sha256=<hex>` over the exact body, the scheme the generic-hmac Receiver checks. */
export function hmacSignature(body: string, key: string): string {
  return `sha256=${createHmac('sha256', key).update(body).digest('hex')}`;
}

/** `generic-hmac`: the generic payload signed with the secret's token. */
export const genericHmac: PayloadBuilder = (n, p) => {
  const req = generic(n, p);
  if (!req || !p.token) return undefined;
  return { ...req, headers: { ...req.headers, 'x-signature': hmacSignature(req.body, p.token) } };
};
