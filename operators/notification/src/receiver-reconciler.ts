import { NOTIFICATION_API_VERSION, type Receiver } from '@mooring/api';
import { type KubeClient, type Reconciler, RetryableError, StalledError } from '@mooring/runtime';
import { receiverProblem } from './receiver-spec.ts';
import { readSecret, SecretError } from './secrets.ts';
import { webhookPath } from './webhook-path.ts';

/** Flux's default Receiver interval: how often the Secret is re-read. */
export const RECEIVER_INTERVAL_MS = 10 * 60_000;

/**
 * Publishes a Receiver: checks its type and fields, reads the token and sets `status.webhookPath`.
 * The webhook server does not wait for it: it judges requests by its own informer's copy of the
 * Receiver and its Secret, with the same checks (receiverProblem). Ready reasons follow Flux (Succeeded,
 * TokenNotFound, ValidationFailed).
 */
export function receiverReconciler(
  client: Pick<KubeClient, 'get'>,
  options: { noCrossNamespaceRefs: boolean },
): Reconciler<Receiver> {
  return {
    apiVersion: NOTIFICATION_API_VERSION,
    kind: 'Receiver',
    defaultIntervalMs: RECEIVER_INTERVAL_MS,
    async reconcile(receiver, ctx) {
      const ns = receiver.metadata.namespace ?? '';
      const name = receiver.metadata.name ?? '';
      const id = `Receiver ${ns}/${name}`;
      const problem = receiverProblem(receiver, options);
      if (problem) throw new StalledError('ValidationFailed', `${id}: ${problem}`);
      const secretName = receiver.spec.secretRef?.name ?? '';
      let token: string | undefined;
      try {
        token = (await readSecret(client, ns, secretName)).token;
      } catch (err) {
        if (err instanceof SecretError) throw new RetryableError('TokenNotFound', `${id}: ${err.message}`);
        throw err;
      }
      if (!token)
        throw new RetryableError('TokenNotFound', `${id}: Secret ${ns}/${secretName} has no 'token' key`);
      const path = webhookPath(token, name, ns);
      ctx.status.webhookPath = path;
      return { reason: 'Succeeded', message: `Receiver initialized for path: ${path}` };
    },
  };
}
