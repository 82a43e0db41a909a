import { NOTIFICATION_API_VERSION, type Receiver } from '@mooring/api';
import { type KubeClient, type Reconciler, RetryableError, StalledError } from '@mooring/runtime';
import type { ReceiverIndex } from './receiver-index.ts';
import { VERIFIERS } from './receivers/index.ts';
import { readSecret, SecretError } from './secrets.ts';
import { webhookPath } from './webhook-path.ts';

/** Flux's default Receiver interval: how often the Secret is re-read. */
export const RECEIVER_INTERVAL_MS = 10 * 60_000;

/**
 * Publishes a Receiver: checks its type and fields, reads the token, sets `status.webhookPath`
 * and registers the path with the webhook server. Ready reasons follow Flux (Succeeded,
 * TokenNotFound, ValidationFailed).
 */
export function receiverReconciler(
  client: Pick<KubeClient, 'get'>,
  index: ReceiverIndex,
  options: { noCrossNamespaceRefs: boolean },
): Reconciler<Receiver> {
  return {
    apiVersion: NOTIFICATION_API_VERSION,
    kind: 'Receiver',
    defaultIntervalMs: RECEIVER_INTERVAL_MS,
    async reconcile(receiver, ctx) {
      const ns = receiver.metadata.namespace ?? '';
      const name = receiver.metadata.name ?? '';
      const ref = { namespace: ns, name };
      const id = `Receiver ${ns}/${name}`;
      const invalid = (message: string) => {
        index.delete(ref);
        return new StalledError('ValidationFailed', `${id}: ${message}`);
      };
      if (!VERIFIERS[receiver.spec.type])
        throw invalid(`type ${receiver.spec.type} is not supported by Mooring yet`);
      if (receiver.spec.resourceFilter || receiver.spec.resources.some((r) => r.filter))
        throw invalid('CEL filters (resourceFilter, resources[].filter) are not supported yet; remove them');
      if (options.noCrossNamespaceRefs) {
        const other = receiver.spec.resources.find((r) => r.namespace && r.namespace !== ns);
        if (other)
          throw invalid(
            `${other.kind} ${other.namespace}/${other.name} is in another namespace and cross-namespace references are disabled`,
          );
      }
      const secretName = receiver.spec.secretRef?.name;
      if (!secretName) throw invalid('spec.secretRef is required');
      let token: string | undefined;
      try {
        token = (await readSecret(client, ns, secretName)).token;
      } catch (err) {
        index.delete(ref);
        if (err instanceof SecretError) throw new RetryableError('TokenNotFound', `${id}: ${err.message}`);
        throw err;
      }
      if (!token) {
        index.delete(ref);
        throw new RetryableError('TokenNotFound', `${id}: Secret ${ns}/${secretName} has no 'token' key`);
      }
      const path = webhookPath(token, name, ns);
      ctx.status.webhookPath = path;
      if (receiver.spec.suspend) index.delete(ref);
      else index.set(ref, path);
      return { reason: 'Succeeded', message: `Receiver initialized for path: ${path}` };
    },
  };
}
