import { KUSTOMIZE_NAME_LABEL, KUSTOMIZE_NAMESPACE_LABEL } from '@mooring/api';
import {
  type FlagTable,
  flagChecks,
  type OperatorDefinition,
  OptionsError,
  parseDuration,
} from '@mooring/runtime';
import { ManagedVersions } from './apply/managed-versions.ts';
import { CapabilitiesCache } from './cluster-capabilities.ts';
import { parseDeletionBudget } from './deletion-budget.ts';
import { HealthWatches } from './health-watch.ts';
import { helmReleaseReconciler } from './helm-release/helm-release-reconciler.ts';
import { runHooks, runTests } from './helm-release/hooks.ts';
import { kustomizationReconciler } from './kustomization-reconciler.ts';
import { kustomizationSetReconciler } from './kustomization-set-reconciler.ts';
import { ArtifactCache, RenderCache } from './render.ts';

/** Flags only the kustomize operator has, parsed and checked with the shared ones. */
export const KUSTOMIZE_FLAGS = {
  'concurrent-ssa': {
    type: 'string',
    default: '8',
    help: 'Objects applied in parallel within one Kustomization (server-side apply requests in flight).',
    check: flagChecks.wholeNumber(1, 1000),
  },
  'helm-render-timeout': {
    type: 'string',
    default: '2m',
    help: 'Longest one helmCharts chart may render (Go duration); a chart that takes longer is stopped and its Kustomization fails with HelmRenderFailed.',
    check: flagChecks.duration(1000),
  },
  'helm-render-memory': {
    type: 'string',
    default: '512',
    help: "Memory cap of one chart render, in MiB (the sandboxed renderer's whole linear memory); a chart that needs more is stopped and its Kustomization fails with HelmRenderFailed.",
    check: flagChecks.wholeNumber(64, 16384),
  },
  'default-deletion-budget': {
    type: 'string',
    default: '50%',
    help: "Most objects one reconcile's prune may delete, for a Kustomization without spec.deletionBudget: a count or 'N%' of its inventory (rounded up). Over it nothing is deleted and the Kustomization reports PruneBudgetExceeded until the revision is approved (mooring approve prune) or the budget raised.",
    check: (value, from) => {
      try {
        parseDeletionBudget(value);
      } catch (err) {
        throw new OptionsError(`${from}: ${(err as Error).message}`);
      }
    },
  },
} satisfies FlagTable;

/** A flag's value as given, else its default. */
function extraFlag(extra: Record<string, unknown>, name: keyof typeof KUSTOMIZE_FLAGS): string {
  const raw = extra[name];
  return typeof raw === 'string' ? raw : KUSTOMIZE_FLAGS[name].default;
}

/** The kustomize operator: Kustomizations and HelmReleases rendered from source artifacts and applied to the cluster. */
export function kustomizeOperator(): OperatorDefinition {
  // Extracted artifacts live on disk while cached; they are removed when the operator stops.
  const artifacts = new ArtifactCache();
  const renders = new RenderCache(undefined, artifacts);
  const capabilities = new CapabilitiesCache();
  // Made with the first client the operator hands over; one per process, closed at stop.
  let healthWatches: HealthWatches | undefined;
  let managedVersions: ManagedVersions | undefined;
  return {
    name: 'kustomize',
    extraFlags: KUSTOMIZE_FLAGS,
    async start() {
      return async () => {
        await healthWatches?.close();
        await managedVersions?.close();
        await artifacts.clear();
      };
    },
    reconcilers(ctx) {
      // Resolved and checked with the other flags: a bad value stopped the process at start-up.
      const extra = ctx.options.extra as Record<string, unknown>;
      healthWatches ??= new HealthWatches(ctx.client);
      // Everything a Kustomization applies carries its name label (render/pipeline.ts).
      managedVersions ??= new ManagedVersions(ctx.client, {
        labelSelector: KUSTOMIZE_NAME_LABEL,
        ownerLabels: [KUSTOMIZE_NAME_LABEL, KUSTOMIZE_NAMESPACE_LABEL],
        log: ctx.log,
      });
      const concurrentApplies = Number(extraFlag(extra, 'concurrent-ssa'));
      const helmLimits = {
        timeoutMs: parseDuration(extraFlag(extra, 'helm-render-timeout')),
        memoryBytes: Number(extraFlag(extra, 'helm-render-memory')) * 1024 * 1024,
      };
      return [
        kustomizationSetReconciler({
          client: ctx.client,
          defaultServiceAccount: ctx.options.defaultServiceAccount,
          noCrossNamespaceRefs: ctx.options.noCrossNamespaceRefs,
          artifacts,
        }) as never,
        kustomizationReconciler({
          client: ctx.client,
          renderCache: renders,
          noCrossNamespaceRefs: ctx.options.noCrossNamespaceRefs,
          defaultServiceAccount: ctx.options.defaultServiceAccount,
          requeueDependencyMs: ctx.options.requeueDependencyMs,
          defaultDeletionBudget: extraFlag(extra, 'default-deletion-budget'),
          concurrentApplies,
          healthWatches,
          managedVersions,
          helm: { limits: helmLimits, capabilities },
        }) as never,
        helmReleaseReconciler({
          client: ctx.client,
          artifacts,
          noCrossNamespaceRefs: ctx.options.noCrossNamespaceRefs,
          defaultServiceAccount: ctx.options.defaultServiceAccount,
          requeueDependencyMs: ctx.options.requeueDependencyMs,
          concurrentApplies,
          helm: { limits: helmLimits, capabilities },
          runHooks,
          runTests,
        }) as never,
      ];
    },
  };
}
