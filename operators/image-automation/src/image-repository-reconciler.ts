import { FINALIZER, IMAGE_API_VERSION, type ImageRepository } from '@mooring/api';
import { type ReconcileResult, type Reconciler, runSteps } from '@mooring/runtime';
import { durationMs, type ImageRepositoryDeps, type ImageRepositoryRun } from './image-repository-run.ts';
import { need } from './run.ts';
import { IMAGE_REPOSITORY_STEPS } from './steps/image-repository/index.ts';

export type { ImageRepositoryDeps } from './image-repository-run.ts';

/**
 * ImageRepository: its reconcile is the list of steps in ./steps/image-repository. List the
 * repository's tags (paginated, with token or basic auth), drop the excluded ones, store them on
 * disk and report the tag set's revision. A scan that finds the same set writes nothing, so
 * ImagePolicies are only woken by real changes.
 */
export function imageRepositoryReconciler(deps: ImageRepositoryDeps): Reconciler<ImageRepository> {
  return {
    apiVersion: IMAGE_API_VERSION,
    kind: 'ImageRepository',
    finalizer: FINALIZER,
    defaultIntervalMs: 5 * 60_000,

    async reconcile(obj, ctx): Promise<ReconcileResult> {
      const run: ImageRepositoryRun = {
        obj,
        ctx,
        deps,
        status: ctx.status as NonNullable<ImageRepository['status']>,
        namespace: obj.metadata.namespace ?? 'default',
        name: obj.metadata.name ?? '',
        intervalMs: durationMs(obj.spec.interval, 5 * 60_000),
      };
      const outcome = await runSteps(IMAGE_REPOSITORY_STEPS, run, (name) =>
        ctx.log.debug({ step: name }, 'step'),
      );
      return { ...need(run.result, 'the scan result'), ...outcome };
    },

    async finalize(repo) {
      await deps.store.remove(repo.metadata.namespace ?? 'default', repo.metadata.name ?? '');
    },
  };
}
