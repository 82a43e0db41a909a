import type { Artifact, HelmRelease, ResourceInventory } from '@mooring/api';
import type { ChartRecord, JsonObject, ReleaseRecord, ReleaseStore } from '@mooring/helm';
import type { Impersonation, KubeClient, ReconcileContext } from '@mooring/runtime';
import type { ApplyChange, KnownVersion } from '../apply/apply-set.ts';
import type { Manifest } from '../apply/object-policy.ts';
import type { CapabilitiesCache } from '../cluster-capabilities.ts';
import type { compileHealthExprs } from '../health-exprs.ts';
import type { ObjectRef } from '../inventory.ts';
import type { RemoteClusters } from '../remote-cluster.ts';
import type { ArtifactCache, HelmRenderLimits } from '../render/index.ts';
import type { runHooks, runTests } from './hooks.ts';
import type { ReleasePlacement } from './release-names.ts';

export interface HelmReleaseDeps {
  client: KubeClient;
  /** The extracted chart artifacts, shared with the Kustomizations' renders. */
  artifacts: ArtifactCache;
  noCrossNamespaceRefs: boolean;
  defaultServiceAccount: string | undefined;
  requeueDependencyMs: number;
  concurrentApplies: number;
  helm: { limits: HelmRenderLimits; capabilities: CapabilitiesCache };
  /** Runs a release's hooks (./hooks.ts runHooks); a test may give another. */
  runHooks: typeof runHooks;
  /** Runs a release's test hooks (`spec.test.enable`; ./hooks.ts runTests). */
  runTests: typeof runTests;
}

/** What the reconciler keeps between reconciles of all its HelmReleases. */
export interface HelmReleaseMemory {
  knownVersions: Map<string, Map<string, KnownVersion>>;
  remotes: RemoteClusters;
}

/** The chart a reconcile installs: its folder in the extracted artifact and what Helm records of it. */
export interface ResolvedChart {
  artifact: Artifact;
  /** The artifact's revision (a HelmChart's: the chart version). */
  revision: string;
  dir: string;
  record: ChartRecord;
  name: string;
  version: string;
  appVersion?: string;
}

/** The objects of a release, as rendered (or read back from a record) and ready to apply. */
export interface ReleaseManifest {
  /** Helm's Release.Manifest text: what is stored in the record. */
  manifest: string;
  hooks: ReleaseRecord['hooks'];
  objects: Manifest[];
  /** sha256 of `manifest`, for status.history. */
  digest: string;
}

/** One reconcile of one HelmRelease: what the steps read and what each adds for the next. */
export interface HelmReleaseRun {
  readonly obj: HelmRelease;
  readonly ctx: ReconcileContext;
  readonly status: NonNullable<HelmRelease['status']>;
  readonly deps: HelmReleaseDeps;
  readonly memory: HelmReleaseMemory;
  readonly started: number;
  readonly timeoutMs: number;
  readonly intervalMs: number;
  readonly owner: { name: string; namespace: string };
  readonly placement: ReleasePlacement;
  readonly signal: AbortSignal;
  /** Aborts (reason Superseded) when a newer generation or chart revision arrives: ends a health wait. */
  readonly superseded?: AbortSignal;
  previous: ResourceInventory | undefined;
  healthExprs?: ReturnType<typeof compileHealthExprs>;
  chart?: ResolvedChart;
  target?: KubeClient;
  impersonate?: Impersonation;
  values?: JsonObject;
  configDigest?: string;
  store?: ReleaseStore;
  /** The release records, oldest first, after an interrupted one was marked failed. */
  history?: ReleaseRecord[];
  /** The newest deployed record, if any. */
  deployed?: ReleaseRecord;
  /** What this reconcile does: nothing new (drift correction only), install or upgrade. */
  action?: 'none' | 'install' | 'upgrade';
  /** A forced install or upgrade (`reconcile.mooring.dev/forceAt`) is this reconcile's. */
  forced?: boolean;
  rendered?: ReleaseManifest;
  changes?: ApplyChange[];
  applied?: ObjectRef[];
  /** The record this reconcile wrote. */
  release?: ReleaseRecord;
}

/** The step's precondition: a field an earlier step fills. */
export function need<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`internal: ${what} is not set; a step ran out of order`);
  return value;
}
