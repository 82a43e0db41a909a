import { type FlagTable, flagChecks, type OperatorDefinition } from '@mooring/runtime';
import { kustomizationReconciler } from './kustomization-reconciler.ts';
import { ArtifactCache, RenderCache } from './render.ts';

/** Flags only the kustomize operator has, parsed and checked with the shared ones. */
export const KUSTOMIZE_FLAGS = {
  'concurrent-ssa': {
    type: 'string',
    default: '8',
    help: 'Objects applied in parallel within one Kustomization (server-side apply requests in flight).',
    check: flagChecks.wholeNumber(1, 1000),
  },
} satisfies FlagTable;

/** The kustomize operator: Kustomizations rendered from source artifacts and applied to the cluster. */
export function kustomizeOperator(): OperatorDefinition {
  // Extracted artifacts live on disk while cached; they are removed when the operator stops.
  const artifacts = new ArtifactCache();
  const renders = new RenderCache(256, artifacts);
  return {
    name: 'kustomize',
    extraFlags: KUSTOMIZE_FLAGS,
    async start() {
      return () => artifacts.clear();
    },
    reconcilers(ctx) {
      // Resolved and checked with the other flags: a bad value stopped the process at start-up.
      const raw = ctx.options.extra['concurrent-ssa'];
      const concurrentApplies = Number(
        typeof raw === 'string' ? raw : KUSTOMIZE_FLAGS['concurrent-ssa'].default,
      );
      return [
        kustomizationReconciler({
          client: ctx.client,
          renderCache: renders,
          noCrossNamespaceRefs: ctx.options.noCrossNamespaceRefs,
          defaultServiceAccount: ctx.options.defaultServiceAccount,
          requeueDependencyMs: ctx.options.requeueDependencyMs,
          concurrentApplies,
        }) as never,
      ];
    },
  };
}
