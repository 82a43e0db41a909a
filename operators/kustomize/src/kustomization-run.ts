import type { Kustomization, ResourceInventory } from '@mooring/api';
import type { Impersonation, KubeClient, ReconcileContext } from '@mooring/runtime';
import type { ApplyChange, KnownVersion } from './apply/apply-set.ts';
import type { ManagedVersions } from './apply/managed-versions.ts';
import type { CapabilitiesCache } from './cluster-capabilities.ts';
import type { HealthMemo } from './health.ts';
import type { compileHealthExprs } from './health-exprs.ts';
import type { HealthWatches } from './health-watch.ts';
import type { ObjectRef } from './inventory.ts';
import type { RemoteClusters } from './remote-cluster.ts';
import type { HelmRenderLimits } from './render/index.ts';
import type { RenderCache } from './render.ts';
import type { ResolvedSource } from './source-ref.ts';
import type { kustomizationTimings } from './timeouts.ts';

export interface KustomizationDeps {
  client: KubeClient;
  renderCache: RenderCache;
  noCrossNamespaceRefs: boolean;
  defaultServiceAccount: string | undefined;
  requeueDependencyMs: number;
  /** `--default-deletion-budget`: spec.deletionBudget when unset (a count or 'N%'). */
  defaultDeletionBudget?: number | string;
  /** Parallel applies within one Kustomization. */
  concurrentApplies: number;
  /** Shared watches that answer health waits on this cluster; without them objects are polled. */
  healthWatches?: HealthWatches;
  /** The applied objects' newest versions, from a watch: a no-op pass reads none of them. */
  managedVersions?: ManagedVersions;
  /** How helmCharts render (`--helm-render-*`) and the targets' capabilities; defaults when absent. */
  helm?: { limits: HelmRenderLimits; capabilities: CapabilitiesCache };
}

/** What the reconciler keeps between reconciles of all its Kustomizations. */
export interface KustomizationMemory {
  /**
   * Per Kustomization: what we last applied, so an unchanged object costs no apply, and no read
   * either while the managed-object watch still holds that version.
   */
  knownVersions: Map<string, Map<string, KnownVersion>>;
  /** Per Kustomization: the version each object was last judged healthy at, for its generation. */
  healthy: Map<string, { generation: number | undefined; currentAt: Map<string, string> }>;
  remotes: RemoteClusters;
  /** Per Kustomization: the inventory this process last left in its status. */
  lastInventory: Map<string, ResourceInventory>;
}

type Rendered = Awaited<ReturnType<RenderCache['get']>>;

/**
 * One reconcile of one Kustomization: what the steps read and what each adds for the next.
 * Fields a step fills are optional until then; a later step that needs one asserts it is there.
 */
export interface KustomizationRun {
  readonly obj: Kustomization;
  readonly ctx: ReconcileContext;
  readonly status: NonNullable<Kustomization['status']>;
  readonly deps: KustomizationDeps;
  readonly memory: KustomizationMemory;
  /** performance.now() at the start: a wall clock stepped back must not make a duration negative. */
  readonly started: number;
  readonly timings: ReturnType<typeof kustomizationTimings>;
  readonly owner: { name: string; namespace: string };
  /** Aborts at the object's timeout or when the operator shuts down. */
  readonly signal: AbortSignal;
  /** The inventory before this reconcile (joined with the stored one before anything is written). */
  previous: ResourceInventory | undefined;
  storedInventoryJoined?: boolean;
  healthExprs?: ReturnType<typeof compileHealthExprs>;
  source?: ResolvedSource;
  /** The cluster the objects go to: this one, or the one `spec.kubeConfig` names. */
  target?: KubeClient;
  rendered?: Rendered;
  impersonate?: Impersonation;
  changes?: ApplyChange[];
  applied?: ObjectRef[];
  /** One line per object the apply changed, for the Progressing event. */
  summary?: string;
}

/** The step's precondition: a field an earlier step fills. */
export function need<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`internal: ${what} is not set; a step ran out of order`);
  return value;
}

/**
 * The health waits' memory for this Kustomization, answered from the managed-object watch; none
 * for a remote cluster (not watched) or without the watch. A new generation (other health checks or
 * expressions) starts it afresh.
 */
export function healthMemoOf(run: KustomizationRun): HealthMemo | undefined {
  const versions = run.deps.managedVersions;
  if (!versions || versions.client !== run.target) return undefined;
  const key = `${run.obj.metadata.namespace}/${run.obj.metadata.name}`;
  const generation = run.obj.metadata.generation;
  let entry = run.memory.healthy.get(key);
  if (!entry || entry.generation !== generation) {
    entry = { generation, currentAt: new Map() };
    run.memory.healthy.set(key, entry);
  }
  return {
    versionOf: (ref) => versions.versionOf({ ...ref, namespace: ref.namespace || undefined }),
    currentAt: entry.currentAt,
  };
}
