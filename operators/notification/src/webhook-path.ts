import { createHash } from 'node:crypto';

/** `/hook/` + hex sha256(token + name + namespace): Flux's Receiver path, unguessable without the token. */
export function webhookPath(token: string, name: string, namespace: string): string {
  return `/hook/${createHash('sha256')
    .update(token + name + namespace)
    .digest('hex')}`;
}
