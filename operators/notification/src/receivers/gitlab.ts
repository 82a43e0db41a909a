import { header, safeEqual, unauthorized, type Verifier } from './types.ts';

/** `gitlab`: the `X-Gitlab-Token` header is the secret token itself; the event type is `X-Gitlab-Event`. */
export const gitlab: Verifier = (req, token) => {
  const sent = header(req, 'x-gitlab-token');
  if (sent === undefined || !safeEqual(sent, token))
    return unauthorized('the X-Gitlab-Token header is missing or wrong');
  return { ok: true, event: header(req, 'x-gitlab-event') };
};
