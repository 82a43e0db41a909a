import { checkPrefixedHmac, header, unauthorized, type Verifier } from './types.ts';

/**
 * `github` (and Gitea/Forgejo, which sign the same way): `X-Hub-Signature-256: sha256=<hex>`, or
 * the legacy SHA-1 `X-Hub-Signature` only when no SHA-256 one is sent; the event type is
 * `X-GitHub-Event` (`X-Gitea-Event` from Gitea). A `ping` is verified but triggers nothing.
 */
export const github: Verifier = (req, token) => {
  const sig256 = header(req, 'x-hub-signature-256');
  const ok = sig256
    ? checkPrefixedHmac(sig256, token, req.body, ['sha256'])
    : checkPrefixedHmac(header(req, 'x-hub-signature'), token, req.body, ['sha1']);
  if (!ok) return unauthorized('the X-Hub-Signature-256 header is missing or does not match the body');
  const event = header(req, 'x-github-event') ?? header(req, 'x-gitea-event');
  return event === 'ping' ? { ok: true, event, ignore: 'ping' } : { ok: true, event };
};
