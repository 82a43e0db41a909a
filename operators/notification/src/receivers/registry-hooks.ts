import { tryJson, type Verifier } from './types.ts';

/**
 * `dockerhub` and `quay`: these registries do not sign their webhooks, so the secret path is the
 * only proof (as in Flux); the body must at least be a JSON object.
 */
export const unsignedJson: Verifier = (req) => {
  const body = tryJson(req.body);
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return { ok: false, status: 400, message: 'the body is not a JSON object' };
  return { ok: true };
};
