import { Reason } from '@mooring/api';
import { type KubeClient, RetryableError } from '@mooring/runtime';
import { waitForHealth } from '../health.ts';
import type { ApplyChange } from './apply-set.ts';

/**
 * What applySet runs after its first stage (CRDs and Namespaces) for a Kustomization and a
 * HelmRelease alike: wait until they are established, then forget the cached REST mappings so the
 * new kinds resolve for the stages after.
 */
export function stageZeroWaiter(
  target: KubeClient,
  signal: AbortSignal,
): (applied: ApplyChange[]) => Promise<void> {
  return async (applied) => {
    const ready = await waitForHealth(
      target,
      applied.filter((c) => c.action !== 'skipped').map((c) => c.ref),
      { timeoutMs: 60_000, signal, pollMs: 200 },
    );
    if (!ready.healthy)
      throw new RetryableError(
        Reason.ReconciliationFailed,
        `CRDs and namespaces not ready: ${ready.message}`,
      );
    target.mapper.invalidate();
  };
}
