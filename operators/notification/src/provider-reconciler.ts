import { NOTIFICATION_API_VERSION, type Provider } from '@mooring/api';
import { type KubeClient, type Reconciler, RetryableError, StalledError } from '@mooring/runtime';
import { ProviderConfigError, resolveProvider } from './provider-config.ts';

/** Providers have no interval; their Secrets are re-checked this often. */
export const PROVIDER_RECHECK_MS = 10 * 60_000;

/**
 * Reports whether a Provider can send: a supported type, a valid address, and the Secrets and keys
 * its type needs. A bad spec stalls; a missing Secret retries, since it may appear later.
 */
export function providerReconciler(client: Pick<KubeClient, 'get'>): Reconciler<Provider> {
  return {
    apiVersion: NOTIFICATION_API_VERSION,
    kind: 'Provider',
    defaultIntervalMs: PROVIDER_RECHECK_MS,
    async reconcile(provider) {
      try {
        await resolveProvider(client, provider);
      } catch (err) {
        if (err instanceof ProviderConfigError) {
          if (err.stalled) throw new StalledError(err.reason, err.message);
          throw new RetryableError(err.reason, err.message);
        }
        throw err;
      }
      return { reason: 'Succeeded', message: 'Initialized' };
    },
  };
}
