import { type Alert, NOTIFICATION_API_VERSION } from '@mooring/api';
import { type KubeClient, type Reconciler, runSteps } from '@mooring/runtime';
import { ALERT_STEPS, type AlertRun } from './alert-steps.ts';

/** Alerts have no interval; their Provider reference is re-checked this often. */
export const ALERT_RECHECK_MS = 10 * 60_000;

/**
 * Reports whether an Alert can work: its patterns compile, its sources stay in its namespace when
 * cross-namespace references are off, and its Provider exists (ALERT_STEPS, in ./alert-steps.ts).
 * (Flux's Alert has no status.)
 */
export function alertReconciler(
  client: Pick<KubeClient, 'get'>,
  options: { noCrossNamespaceRefs: boolean },
): Reconciler<Alert> {
  return {
    apiVersion: NOTIFICATION_API_VERSION,
    kind: 'Alert',
    defaultIntervalMs: ALERT_RECHECK_MS,
    async reconcile(obj, ctx) {
      const namespace = obj.metadata.namespace ?? '';
      const run: AlertRun = {
        obj,
        client,
        noCrossNamespaceRefs: options.noCrossNamespaceRefs,
        namespace,
        id: `Alert ${namespace}/${obj.metadata.name}`,
      };
      await runSteps(ALERT_STEPS, run, (name) => ctx.log.debug({ step: name }, 'step'));
      return { reason: 'Succeeded', message: 'Initialized' };
    },
  };
}
