import { ApiError } from './api-error.ts';
import type { KubeClient } from './kube-client.ts';
import type { KubeObject } from './kube-object.ts';
import { RetryableError, StalledError } from './reconcile-errors.ts';

interface SecretObject extends KubeObject {
  data?: Record<string, string>;
  stringData?: Record<string, string>;
}

/** A Secret's values, decoded; a missing Secret is retried (it may be created after the object). */
export async function readSecretData(
  client: KubeClient,
  namespace: string,
  name: string,
  purpose: string,
): Promise<Record<string, string>> {
  let secret: SecretObject;
  try {
    secret = await client.get<SecretObject>({ apiVersion: 'v1', kind: 'Secret', namespace, name });
  } catch (err) {
    if (err instanceof ApiError && err.isNotFound) {
      throw new RetryableError('SecretNotFound', `${purpose} Secret ${namespace}/${name} not found`);
    }
    if (err instanceof ApiError && err.statusCode === 403) {
      throw new StalledError('AccessDenied', `not allowed to read ${purpose} Secret ${namespace}/${name}`);
    }
    throw err;
  }
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(secret.data ?? {})) out[k] = Buffer.from(v, 'base64').toString('utf8');
  return out;
}

/** A ConfigMap's data or a Secret's decoded values; undefined when the object does not exist. */
export async function readObjectData(
  client: KubeClient,
  kind: 'Secret' | 'ConfigMap',
  namespace: string,
  name: string,
): Promise<Record<string, string> | undefined> {
  let obj: SecretObject;
  try {
    obj = await client.get<SecretObject>({ apiVersion: 'v1', kind, namespace, name });
  } catch (err) {
    if (err instanceof ApiError && err.isNotFound) return undefined;
    throw err;
  }
  const data = obj.data ?? {};
  if (kind === 'ConfigMap') return { ...data };
  return Object.fromEntries(
    Object.entries(data).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]),
  );
}
