import { header, safeEqual, unauthorized, type Verifier } from './types.ts';

/** `harbor`: the webhook's auth header (`Authorization`) carries the token as configured in Harbor. */
export const harbor: Verifier = (req, token) => {
  const sent = header(req, 'authorization');
  if (sent === undefined || !safeEqual(sent, token))
    return unauthorized('the Authorization header is missing or wrong');
  return { ok: true };
};
