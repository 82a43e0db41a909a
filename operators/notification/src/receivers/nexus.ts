import { header, hmacHex, safeEqual, unauthorized, type Verifier } from './types.ts';

/** `nexus`: `X-Nexus-Webhook-Signature` is the hex HMAC-SHA1 of the body. */
export const nexus: Verifier = (req, token) => {
  const sent = header(req, 'x-nexus-webhook-signature');
  if (sent === undefined || !safeEqual(hmacHex('sha1', token, req.body), sent.toLowerCase()))
    return unauthorized('the X-Nexus-Webhook-Signature header is missing or does not match the body');
  return { ok: true };
};
