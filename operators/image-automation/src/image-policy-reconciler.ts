import { FINALIZER, IMAGE_API_VERSION, type ImagePolicy, type ImageRepository } from '@mooring/api';
import { type ReconcileResult, type Reconciler, runSteps } from '@mooring/runtime';
import type { ImagePolicyDeps, ImagePolicyRun } from './image-policy-run.ts';
import { need } from './run.ts';
import { IMAGE_POLICY_STEPS } from './steps/image-policy/index.ts';

export type { ImagePolicyDeps } from './image-policy-run.ts';

/**
 * ImagePolicy: its reconcile is the list of steps in ./steps/image-policy. Read the referenced
 * ImageRepository's stored tags, choose the latest by the policy (after filterTags), look up its
 * digest when the digestReflectionPolicy asks, and publish it in `status.latestRef`. Runs again as soon as the repository's scan revision changes.
 */
export function imagePolicyReconciler(deps: ImagePolicyDeps): Reconciler<ImagePolicy> {
  return {
    apiVersion: IMAGE_API_VERSION,
    kind: 'ImagePolicy',
    finalizer: FINALIZER,
    defaultIntervalMs: 10 * 60_000,

    async reconcile(obj, ctx): Promise<ReconcileResult> {
      const repoNamespace = obj.spec.imageRepositoryRef.namespace ?? obj.metadata.namespace ?? 'default';
      const repoName = obj.spec.imageRepositoryRef.name;
      const run: ImagePolicyRun = {
        obj,
        ctx,
        deps,
        status: ctx.status as NonNullable<ImagePolicy['status']>,
        repoNamespace,
        repoName,
        what: `ImageRepository ${repoNamespace}/${repoName}`,
      };
      const outcome = await runSteps(IMAGE_POLICY_STEPS, run, (name) =>
        ctx.log.debug({ step: name }, 'step'),
      );
      return { ...need(run.result, 'the latest image'), ...outcome };
    },

    // A new scan revision of a repository re-evaluates every policy that reads it, right away.
    watches: [
      {
        apiVersion: IMAGE_API_VERSION,
        kind: 'ImageRepository',
        enqueue(changed, old, policies) {
          const revision = (o: unknown) =>
            (o as ImageRepository | undefined)?.status?.lastScanResult?.revision;
          if (old && revision(changed) === revision(old)) return [];
          const { namespace, name } = changed.metadata;
          return policies
            .filter(
              (p) =>
                p.spec.imageRepositoryRef.name === name &&
                (p.spec.imageRepositoryRef.namespace ?? p.metadata.namespace) === namespace,
            )
            .map((p) => `${p.metadata.namespace}/${p.metadata.name}`);
        },
      },
    ],
  };
}
