import { checkPrefixedHmac, header, unauthorized, type Verifier } from './types.ts';

/** `generic-hmac`: `X-Signature: <sha1|sha256|sha512>=<hex HMAC of the body>`. */
export const genericHmac: Verifier = (req, token) =>
  checkPrefixedHmac(header(req, 'x-signature'), token, req.body, ['sha1', 'sha256', 'sha512'])
    ? { ok: true }
    : unauthorized('the X-Signature header is missing or does not match the body');
