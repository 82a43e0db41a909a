import { FINALIZER, IMAGE_API_VERSION, type ImagePolicy, type ImageUpdateAutomation } from '@mooring/api';
import { type ReconcileResult, type Reconciler, runSteps } from '@mooring/runtime';
import type { ImageUpdateAutomationDeps, ImageUpdateAutomationRun } from './image-update-automation-run.ts';
import { need } from './run.ts';
import { IMAGE_UPDATE_AUTOMATION_STEPS } from './steps/image-update-automation/index.ts';

export type { ImageUpdateAutomationDeps } from './image-update-automation-run.ts';

/**
 * ImageUpdateAutomation: its reconcile is the list of steps in ./steps/image-update-automation.
 * Clone the GitRepository's branch, rewrite the values marked with `$imagepolicy` setters to the
 * images the selected ImagePolicies chose, and when anything changed, commit (signed when asked)
 * and push to `git.push.branch`. A push rejected because the branch moved starts again from a
 * fresh clone, a bounded number of times.
 */
export function imageUpdateAutomationReconciler(
  deps: ImageUpdateAutomationDeps,
): Reconciler<ImageUpdateAutomation> {
  return {
    apiVersion: IMAGE_API_VERSION,
    kind: 'ImageUpdateAutomation',
    finalizer: FINALIZER,
    defaultIntervalMs: 5 * 60_000,

    async reconcile(obj, ctx): Promise<ReconcileResult> {
      const run: ImageUpdateAutomationRun = {
        obj,
        ctx,
        deps,
        status: ctx.status as NonNullable<ImageUpdateAutomation['status']>,
        namespace: obj.metadata.namespace ?? 'default',
      };
      const outcome = await runSteps(IMAGE_UPDATE_AUTOMATION_STEPS, run, (name) =>
        ctx.log.debug({ step: name }, 'step'),
      );
      return { ...need(run.result, 'the run result'), ...outcome };
    },

    // A policy that picks a new image runs the automations of its namespace at once.
    watches: [
      {
        apiVersion: IMAGE_API_VERSION,
        kind: 'ImagePolicy',
        enqueue(changed, old, automations) {
          const latest = (o: unknown) =>
            JSON.stringify((o as ImagePolicy | undefined)?.status?.latestRef ?? null);
          if (!old || latest(changed) === latest(old)) return [];
          return automations
            .filter((a) => a.metadata.namespace === changed.metadata.namespace)
            .map((a) => `${a.metadata.namespace}/${a.metadata.name}`);
        },
      },
    ],
  };
}
