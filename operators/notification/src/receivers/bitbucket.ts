import { checkPrefixedHmac, header, unauthorized, type Verifier } from './types.ts';

/**
 * `bitbucket` (Cloud and Server/Data Center): `X-Hub-Signature: sha256=<hex>` (Server also sends
 * sha1 in older versions); the event type is `X-Event-Key`. `diagnostics:ping` triggers nothing.
 */
export const bitbucket: Verifier = (req, token) => {
  if (!checkPrefixedHmac(header(req, 'x-hub-signature'), token, req.body, ['sha256', 'sha1']))
    return unauthorized('the X-Hub-Signature header is missing or does not match the body');
  const event = header(req, 'x-event-key');
  return event === 'diagnostics:ping' ? { ok: true, event, ignore: 'ping' } : { ok: true, event };
};
