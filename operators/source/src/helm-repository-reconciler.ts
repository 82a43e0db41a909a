import { FINALIZER, type HelmRepository, SOURCE_API_VERSION } from '@mooring/api';
import type { Reconciler } from '@mooring/runtime';
import type { HelmRepositoryDeps, HelmRepositoryRun } from './helm-repository-run.ts';
import { storageRefOf } from './source-run.ts';
import { reconcileSource } from './steps/artifact.ts';
import { HELM_REPOSITORY_STEPS } from './steps/helm-repository/index.ts';
import { specTimeoutMs } from './timeouts.ts';

/**
 * HelmRepository: its reconcile is the list of steps in ./steps/helm-repository. Type default
 * fetches `index.yaml` with the Secret's credentials, checks and normalises it and stores it as
 * the artifact when its digest changed; type oci is only checked and marked Ready (no artifact).
 */
export function helmRepositoryReconciler(deps: HelmRepositoryDeps): Reconciler<HelmRepository> {
  return {
    apiVersion: SOURCE_API_VERSION,
    kind: 'HelmRepository',
    finalizer: FINALIZER,
    // Flux's default when spec.interval is left out (it is optional for type oci).
    defaultIntervalMs: 600_000,

    reconcile(obj, ctx) {
      const run: HelmRepositoryRun = {
        obj,
        ctx,
        deps,
        status: ctx.status as NonNullable<HelmRepository['status']>,
        storage: deps.storage,
        storageRef: storageRefOf('HelmRepository', obj),
        timeoutMs: specTimeoutMs(obj.spec.timeout),
      };
      return reconcileSource(HELM_REPOSITORY_STEPS, run);
    },

    async finalize(obj) {
      await deps.storage.remove(storageRefOf('HelmRepository', obj));
    },
  };
}
