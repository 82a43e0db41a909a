import type { OperatorDefinition } from '@mooring/runtime';
import { kustomizationReconciler } from './kustomization-reconciler.ts';
import { ArtifactCache, RenderCache } from './render.ts';

/** Flags only the kustomize operator has. */
export const KUSTOMIZE_FLAGS = {
  'concurrent-ssa': { type: 'string' as const },
};

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
      const raw = ctx.options.extra['concurrent-ssa'] ?? process.env.MOORING_CONCURRENT_SSA;
      const concurrentApplies = typeof raw === 'string' && /^[1-9][0-9]*$/.test(raw) ? Number(raw) : 8;
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
