import { type Alert, NOTIFICATION_API_VERSION } from '@mooring/api';
import { ApiError, type KubeClient, type Reconciler, RetryableError, StalledError } from '@mooring/runtime';
import { compilePatterns } from './alert-matcher.ts';

/** Alerts have no interval; their Provider reference is re-checked this often. */
export const ALERT_RECHECK_MS = 10 * 60_000;

/**
 * Reports whether an Alert can work: its patterns compile, its sources stay in its namespace when
 * cross-namespace references are off, and its Provider exists. (Flux's Alert has no status.)
 */
export function alertReconciler(
  client: Pick<KubeClient, 'get'>,
  options: { noCrossNamespaceRefs: boolean },
): Reconciler<Alert> {
  return {
    apiVersion: NOTIFICATION_API_VERSION,
    kind: 'Alert',
    defaultIntervalMs: ALERT_RECHECK_MS,
    async reconcile(alert) {
      const ns = alert.metadata.namespace ?? '';
      for (const [field, list] of [
        ['inclusionList', alert.spec.inclusionList],
        ['exclusionList', alert.spec.exclusionList],
      ] as const) {
        const compiled = compilePatterns(list, field);
        if (typeof compiled === 'string')
          throw new StalledError('InvalidConfig', `Alert ${ns}/${alert.metadata.name}: ${compiled}`);
      }
      if (options.noCrossNamespaceRefs) {
        const other = alert.spec.eventSources.find((s) => s.namespace && s.namespace !== ns);
        if (other)
          throw new StalledError(
            'AccessDenied',
            `Alert ${ns}/${alert.metadata.name}: event source ${other.kind} ${other.namespace}/${other.name} is in another namespace and cross-namespace references are disabled`,
          );
      }
      const providerName = alert.spec.providerRef.name;
      try {
        await client.get({
          apiVersion: NOTIFICATION_API_VERSION,
          kind: 'Provider',
          namespace: ns,
          name: providerName,
        });
      } catch (err) {
        if (err instanceof ApiError && err.isNotFound)
          throw new RetryableError(
            'ProviderNotFound',
            `Alert ${ns}/${alert.metadata.name}: Provider ${providerName} was not found`,
          );
        throw err;
      }
      return { reason: 'Succeeded', message: 'Initialized' };
    },
  };
}
