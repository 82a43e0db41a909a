import { NOTIFICATION_API_VERSION, type Receiver } from '@mooring/api';
import { type KubeClient, type Reconciler, runSteps } from '@mooring/runtime';
import { RECEIVER_STEPS, type ReceiverRun } from './receiver-steps.ts';

/** Flux's default Receiver interval: how often the Secret is re-read. */
export const RECEIVER_INTERVAL_MS = 10 * 60_000;

/**
 * Publishes a Receiver: checks its type and fields, reads the token and sets `status.webhookPath`
 * (RECEIVER_STEPS, in ./receiver-steps.ts).
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
    async reconcile(obj, ctx) {
      const namespace = obj.metadata.namespace ?? '';
      const name = obj.metadata.name ?? '';
      const run: ReceiverRun = {
        obj,
        ctx,
        client,
        noCrossNamespaceRefs: options.noCrossNamespaceRefs,
        namespace,
        name,
        id: `Receiver ${namespace}/${name}`,
      };
      await runSteps(RECEIVER_STEPS, run, (step) => ctx.log.debug({ step }, 'step'));
      return { reason: 'Succeeded', message: `Receiver initialized for path: ${run.path}` };
    },
  };
}
