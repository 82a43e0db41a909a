import {
  type Artifact,
  FINALIZER,
  HELM_CHART_SOURCE_KINDS,
  type HelmChart,
  SOURCE_API_VERSION,
} from '@mooring/api';
import type { Reconciler } from '@mooring/runtime';
import type { HelmChartDeps, HelmChartRun } from './helm-chart-run.ts';
import { storageRefOf } from './source-run.ts';
import { reconcileSource } from './steps/artifact.ts';
import { HELM_CHART_STEPS } from './steps/helm-chart/index.ts';
import { specTimeoutMs } from './timeouts.ts';

/**
 * HelmChart: its reconcile is the list of steps in ./steps/helm-chart. The chart version is
 * resolved from the source's artifact (the index of a HelmRepository, Chart.yaml in a Git or OCI
 * tree); when the stored package already holds it, that is all. Otherwise the package is pulled
 * (digest checked against the index) or packaged from the folder, and stored as the artifact.
 */
export function helmChartReconciler(deps: HelmChartDeps): Reconciler<HelmChart> {
  return {
    apiVersion: SOURCE_API_VERSION,
    kind: 'HelmChart',
    finalizer: FINALIZER,
    defaultIntervalMs: 600_000,

    reconcile(obj, ctx) {
      const run: HelmChartRun = {
        obj,
        ctx,
        deps,
        status: ctx.status as NonNullable<HelmChart['status']>,
        storage: deps.storage,
        storageRef: storageRefOf('HelmChart', obj),
        // The chart download shares the repository's timeout in Flux; 60 s here.
        timeoutMs: specTimeoutMs(undefined),
      };
      return reconcileSource(HELM_CHART_STEPS, run);
    },

    async finalize(obj) {
      await deps.storage.remove(storageRefOf('HelmChart', obj));
    },

    // A chart is rebuilt as soon as its source stores a new artifact.
    watches: HELM_CHART_SOURCE_KINDS.map((kind) => ({
      apiVersion: SOURCE_API_VERSION,
      kind,
      enqueue(changed, old, objects) {
        const digest = (o: unknown) =>
          (o as { status?: { artifact?: Artifact } } | undefined)?.status?.artifact?.digest;
        if (digest(changed) === digest(old)) return [];
        const { namespace, name } = changed.metadata;
        return objects
          .filter(
            (o) =>
              o.metadata.namespace === namespace &&
              o.spec.sourceRef.kind === kind &&
              o.spec.sourceRef.name === name,
          )
          .map((o) => `${o.metadata.namespace}/${o.metadata.name}`);
      },
    })),
  };
}
