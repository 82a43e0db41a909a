import { FINALIZER, type OCIRepository, SOURCE_API_VERSION } from '@mooring/api';
import type { Reconciler } from '@mooring/runtime';
import type { OciRepositoryDeps, OciRepositoryRun } from './oci-repository-run.ts';
import { storageRefOf } from './source-run.ts';
import { reconcileSource } from './steps/artifact.ts';
import { OCI_REPOSITORY_STEPS } from './steps/oci-repository/index.ts';
import { specTimeoutMs } from './timeouts.ts';

/**
 * OCIRepository: its reconcile is the list of steps in ./steps/oci-repository. The ref is
 * resolved to a manifest digest (one registry call for a tag or digest); when the stored
 * artifact already holds that manifest that is all. Otherwise the selected layer is pulled,
 * its digest verified as it streams, and stored extracted-and-filtered or copied as-is.
 */
export function ociRepositoryReconciler(deps: OciRepositoryDeps): Reconciler<OCIRepository> {
  return {
    apiVersion: SOURCE_API_VERSION,
    kind: 'OCIRepository',
    finalizer: FINALIZER,
    defaultIntervalMs: 60_000,

    reconcile(obj, ctx) {
      const run: OciRepositoryRun = {
        obj,
        ctx,
        deps,
        status: ctx.status as NonNullable<OCIRepository['status']>,
        storage: deps.storage,
        storageRef: storageRefOf('OCIRepository', obj),
        timeoutMs: specTimeoutMs(obj.spec.timeout),
      };
      return reconcileSource(OCI_REPOSITORY_STEPS, run);
    },

    async finalize(obj) {
      await deps.storage.remove(storageRefOf('OCIRepository', obj));
    },
  };
}
