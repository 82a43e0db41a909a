import type { Reason } from '@mooring/api';
import { ApiError, type KubeClient, type KubeObject } from '@mooring/runtime';

/** A Secret's data decoded to strings. */
export type SecretData = Record<string, string>;

/** A Secret that is missing or unreadable; the message names it, never its content. */
export class SecretError extends Error {
  readonly reason: Reason;
  constructor(reason: Reason, message: string) {
    super(message);
    this.name = 'SecretError';
    this.reason = reason;
  }
}

/** Reads and decodes a Secret (data and stringData-free form the API returns). */
export async function readSecret(
  client: Pick<KubeClient, 'get'>,
  namespace: string,
  name: string,
): Promise<SecretData> {
  let secret: KubeObject & { data?: Record<string, string> };
  try {
    secret = await client.get({ apiVersion: 'v1', kind: 'Secret', namespace, name });
  } catch (err) {
    if (err instanceof ApiError && err.isNotFound)
      throw new SecretError('SecretNotFound', `Secret ${namespace}/${name} was not found`);
    throw new SecretError(
      'SecretUnreadable',
      `Secret ${namespace}/${name} could not be read (HTTP ${err instanceof ApiError ? err.statusCode : 'error'})`,
    );
  }
  const out: SecretData = {};
  for (const [k, v] of Object.entries(secret.data ?? {})) out[k] = Buffer.from(v, 'base64').toString('utf8');
  return out;
}
