import { type Static, Type } from '@sinclair/typebox';
import {
  Interval,
  LocalObjectReference,
  NamespacedObjectKindReference,
  ReconcileStatus,
  SecretKeyReference,
  SecretRef,
  Timeout,
} from './common.ts';
import { KUSTOMIZE_API_VERSION } from './groups.ts';
import { SOURCE_KINDS } from './kind-registry.ts';
import { CustomHealthCheck, DriftIgnoreRule, ImageOverride, Patch } from './kustomize-overrides.ts';
import { KubeObject } from './object.ts';
import { cel, DateTime, Int64, IntOrString, StringEnum, StringMap, withDescription } from './schema-kit.ts';

export const DELETION_POLICIES = ['MirrorPrune', 'Delete', 'WaitForTermination', 'Orphan'] as const;
export const SUBSTITUTE_STRATEGIES = ['WithVariables', 'Always'] as const;
export const BUILD_METADATA_OPTIONS = ['originAnnotations', 'transformerAnnotations'] as const;

export const KustomizationSourceReference = Type.Object({
  apiVersion: Type.Optional(Type.String({ description: 'API version of the source.' })),
  kind: StringEnum(SOURCE_KINDS, { description: 'Kind of the source.' }),
  name: Type.String({ description: 'Name of the source.' }),
  namespace: Type.Optional(
    Type.String({ description: "Namespace of the source, the Kustomization's namespace by default." }),
  ),
});
export type KustomizationSourceReference = Static<typeof KustomizationSourceReference>;

/** Kinds a dependsOn entry may name; either kind may depend on the other (Flux allows only its own). */
export const DEPENDENCY_KINDS = ['Kustomization', 'HelmRelease'] as const;

export const DependencyReference = Type.Object({
  kind: Type.Optional(
    StringEnum(DEPENDENCY_KINDS, {
      description: "Kind depended on; the depending object's kind by default.",
    }),
  ),
  name: Type.String({ description: 'Name of the Kustomization or HelmRelease depended on.' }),
  namespace: Type.Optional(Type.String({ description: "Its namespace, this one's by default." })),
  readyExpr: Type.Optional(
    Type.String({ description: 'CEL over `dep` and `self` replacing the built-in readiness check.' }),
  ),
});
export type DependencyReference = Static<typeof DependencyReference>;

export const SubstituteReference = Type.Object({
  kind: StringEnum(['Secret', 'ConfigMap'], { description: 'Kind of the object holding variables.' }),
  name: Type.String({ description: 'Its name, in the same namespace.', minLength: 1, maxLength: 253 }),
  optional: Type.Optional(
    Type.Boolean({ description: 'Treat a missing object as empty instead of failing.', default: false }),
  ),
});

export const PostBuild = Type.Object({
  substitute: Type.Optional(StringMap({ description: 'Variables substituted into the built manifests.' })),
  substituteFrom: Type.Optional(
    Type.Array(SubstituteReference, {
      description: 'ConfigMaps and Secrets whose data keys are variables; later entries win.',
    }),
  ),
  substituteStrategy: Type.Optional(
    StringEnum(SUBSTITUTE_STRATEGIES, {
      description: "'WithVariables' (default) skips substitution when no variable is set; 'Always' runs it.",
    }),
  ),
});
export type PostBuild = Static<typeof PostBuild>;

export const Decryption = Type.Object({
  provider: StringEnum(['sops'], { description: 'Decryption engine.' }),
  secretRef: Type.Optional(SecretRef('with decryption keys (*.agekey, *.asc, sops.* credentials).')),
  serviceAccountName: Type.Optional(
    Type.String({ description: 'ServiceAccount for cloud KMS access; static keys in secretRef win.' }),
  ),
});
export type Decryption = Static<typeof Decryption>;

export const KubeConfigReference = Type.Object(
  {
    secretRef: Type.Optional(
      withDescription(
        SecretKeyReference,
        "Secret with a kubeconfig; key 'value' or 'value.yaml' by default.",
      ),
    ),
    configMapRef: Type.Optional(
      withDescription(LocalObjectReference, 'ConfigMap describing a cluster reached with workload identity.'),
    ),
  },
  cel({
    rule: 'has(self.secretRef) != has(self.configMapRef)',
    message: 'set exactly one of secretRef and configMapRef',
  }),
);

export const CommonMetadata = Type.Object({
  labels: Type.Optional(StringMap({ description: 'Labels added to every applied object.' })),
  annotations: Type.Optional(StringMap({ description: 'Annotations added to every applied object.' })),
});

export const KustomizationSpec = Type.Object(
  {
    sourceRef: withDescription(KustomizationSourceReference, 'Source whose artifact holds the manifests.'),
    path: Type.Optional(Type.String({ description: 'Directory in the artifact, its root by default.' })),
    interval: Interval('How often to reconcile and correct drift.'),
    retryInterval: Type.Optional(
      Interval('How soon to retry after a failure, interval by default.', { field: 'retryInterval' }),
    ),
    timeout: Type.Optional(
      Timeout('Timeout of build, apply, health checks and prune; interval - 30s by default, at least 30s.', {
        hours: true,
      }),
    ),
    prune: Type.Boolean({ description: 'Delete objects that are no longer in the source.' }),
    allowEmpty: Type.Optional(
      Type.Boolean({
        description:
          'Allow a render with no objects to prune everything applied before; refused by default, as a render that comes out empty is more often a mistake than an intent.',
      }),
    ),
    deletionBudget: Type.Optional(
      IntOrString({
        description:
          "Most objects prune may delete in one reconcile: a count, or 'N%' of the inventory (rounded up); over it nothing is deleted until the revision is approved (mooring approve prune) or the budget raised. The operator's --default-deletion-budget when unset.",
        ...cel({
          rule: "type(self) == int ? self >= 0 : self.matches('^([0-9]|[1-9][0-9]|100)%$')",
          message: "deletionBudget must be a count of at least 0 or a percentage from '0%' to '100%'",
        }),
      }),
    ),
    deletionPolicy: Type.Optional(
      StringEnum(DELETION_POLICIES, {
        description: "What deleting the Kustomization does to its objects; 'MirrorPrune' follows prune.",
      }),
    ),
    targetNamespace: Type.Optional(
      Type.String({ description: 'Namespace set on every namespaced object.', minLength: 1, maxLength: 63 }),
    ),
    dependsOn: Type.Optional(
      Type.Array(DependencyReference, {
        description: 'Kustomizations and HelmReleases that must be ready first.',
      }),
    ),
    healthChecks: Type.Optional(
      Type.Array(NamespacedObjectKindReference, { description: 'Objects that must become healthy.' }),
    ),
    healthCheckExprs: Type.Optional(
      Type.Array(CustomHealthCheck, { description: 'CEL health rules for custom resources.' }),
    ),
    wait: Type.Optional(
      Type.Boolean({ description: 'Wait for every applied object to be healthy; healthChecks is ignored.' }),
    ),
    force: Type.Optional(
      Type.Boolean({ description: 'Recreate objects whose immutable fields changed.', default: false }),
    ),
    postBuild: Type.Optional(withDescription(PostBuild, 'Variable substitution after the build.')),
    decryption: Type.Optional(withDescription(Decryption, 'Decrypt SOPS-encrypted manifests.')),
    serviceAccountName: Type.Optional(
      Type.String({ description: 'ServiceAccount to impersonate when applying.' }),
    ),
    kubeConfig: Type.Optional(withDescription(KubeConfigReference, 'Apply to a remote cluster.')),
    patches: Type.Optional(Type.Array(Patch, { description: 'Kustomize patches.' })),
    images: Type.Optional(Type.Array(ImageOverride, { description: 'Kustomize image overrides.' })),
    namePrefix: Type.Optional(
      Type.String({ description: 'Prefix for the names of all objects.', minLength: 1, maxLength: 200 }),
    ),
    nameSuffix: Type.Optional(
      Type.String({ description: 'Suffix for the names of all objects.', minLength: 1, maxLength: 200 }),
    ),
    commonMetadata: Type.Optional(
      withDescription(CommonMetadata, 'Labels and annotations for every object (not selectors).'),
    ),
    components: Type.Optional(
      Type.Array(Type.String(), { description: 'Kustomize components, relative to path.' }),
    ),
    ignoreMissingComponents: Type.Optional(
      Type.Boolean({ description: 'Drop component paths that do not exist.' }),
    ),
    buildMetadata: Type.Optional(
      Type.Array(StringEnum(BUILD_METADATA_OPTIONS), { description: 'Kustomize buildMetadata options.' }),
    ),
    ignore: Type.Optional(Type.Array(DriftIgnoreRule, { description: 'Fields whose drift is ignored.' })),
    suspend: Type.Optional(Type.Boolean({ description: 'Stop reconciling this object.' })),
  },
  { description: 'What to build from a source and how to apply it.' },
);
export type KustomizationSpec = Static<typeof KustomizationSpec>;

/** Objects applied by the last successful reconcile; id is <namespace>_<name>_<group>_<kind>. */
export const ResourceInventory = Type.Object({
  entries: Type.Array(
    Type.Object({
      id: Type.String({ description: '<namespace>_<name>_<group>_<kind>, empty parts for core/cluster.' }),
      v: Type.String({ description: 'API version.' }),
    }),
  ),
});
export type ResourceInventory = Static<typeof ResourceInventory>;

/** One distinct outcome of recent reconciles (Flux meta.History snapshot). */
export const HistorySnapshot = Type.Object({
  digest: Type.String({ description: 'sha256 of the built manifests.' }),
  firstReconciled: DateTime(),
  lastReconciled: DateTime(),
  lastReconciledDuration: Type.String({ description: 'Duration of the last reconcile.' }),
  lastReconciledStatus: Type.String({ description: 'Ready reason of the last reconcile.' }),
  totalReconciliations: Int64(),
  metadata: Type.Optional(StringMap({ description: 'revision, originRevision, ...' })),
});
export type HistorySnapshot = Static<typeof HistorySnapshot>;

/** How the hooks of one phase ended for the run recorded in `status.hooks`. */
export const HookPhaseResult = Type.Object({
  result: StringEnum(['Succeeded', 'Failed'], { description: 'How the phase ended.' }),
  message: Type.Optional(Type.String({ description: 'For a failure: which hook failed, and why.' })),
});

/** Which hooks (`mooring.dev/hook`) ran for which revision, so a re-reconcile or a restart does not run them again. */
export const HookRunStatus = Type.Object({
  revision: Type.String({ description: 'Source revision the hooks ran for.' }),
  digest: Type.String({
    description: 'sha256 of the render they ran for: a new revision or a changed render runs them again.',
  }),
  requestedAt: Type.Optional(
    Type.String({
      description: 'reconcile.mooring.dev/requestedAt when they ran: a new value runs a failed phase again.',
    }),
  ),
  preApply: Type.Optional(HookPhaseResult),
  postApply: Type.Optional(HookPhaseResult),
  onFailure: Type.Optional(HookPhaseResult),
  objects: Type.Optional(
    withDescription(
      ResourceInventory,
      'The hook objects of this revision: deleted, with prune, once a revision no longer declares them, and with the Kustomization.',
    ),
  ),
});
export type HookRunStatus = Static<typeof HookRunStatus>;

export const KustomizationStatus = ReconcileStatus(
  {
    lastAppliedRevision: Type.Optional(Type.String({ description: 'Source revision last applied.' })),
    lastAppliedOriginRevision: Type.Optional(
      Type.String({ description: 'Origin revision (e.g. org.opencontainers.image.revision) last applied.' }),
    ),
    lastAttemptedRevision: Type.Optional(Type.String({ description: 'Source revision last attempted.' })),
    inventory: Type.Optional(withDescription(ResourceInventory, 'Objects applied by the last reconcile.')),
    prunePending: Type.Optional(
      Type.Object(
        {
          revision: Type.String({ description: 'Source revision whose prune was refused.' }),
          count: Type.Integer({ description: 'Objects it would delete.' }),
          budget: Type.Integer({ description: 'Objects the deletion budget allowed.' }),
          objects: Type.Array(Type.String(), {
            description: 'The first of them, as Kind/namespace/name (at most 20).',
          }),
        },
        {
          description:
            'A prune over the deletion budget, waiting for approval (mooring approve prune) or a higher budget.',
        },
      ),
    ),
    lastHandledPruneApproval: Type.Optional(
      Type.String({
        description: 'The kustomize.mooring.dev/approvePrune revision whose prune over the budget was done.',
      }),
    ),
    history: Type.Optional(
      Type.Array(HistorySnapshot, { description: 'Last reconcile outcomes, newest first, at most 5.' }),
    ),
    hooks: Type.Optional(withDescription(HookRunStatus, 'The hooks run for the last revision that had any.')),
  },
  'Observed state of the Kustomization.',
);
export type KustomizationStatus = Static<typeof KustomizationStatus>;

export const Kustomization = KubeObject(
  KUSTOMIZE_API_VERSION,
  'Kustomization',
  KustomizationSpec,
  KustomizationStatus,
);
export type Kustomization = Static<typeof Kustomization>;
