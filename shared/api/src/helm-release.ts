import { createHash } from 'node:crypto';
import { type Static, Type } from '@sinclair/typebox';
import { Interval, ReconcileStatus, Timeout } from './common.ts';
import { HELM_API_VERSION } from './groups.ts';
import { HELM_CHART_RECONCILE_STRATEGIES } from './helm-chart.ts';
import { DependencyReference, KubeConfigReference, ResourceInventory } from './kustomization.ts';
import { CustomHealthCheck, DriftIgnoreRule, ImageOverride, Patch } from './kustomize-overrides.ts';
import { KubeObject } from './object.ts';
import { cel, DateTime, FreeObject, Int64, StringEnum, StringMap, withDescription } from './schema-kit.ts';

// Flux helm-controller v2's HelmRelease (helm.toolkit.fluxcd.io/v2), field for field where
// Mooring does the same thing; what Mooring adds (inventory, kind in dependsOn, drift detection
// on by default) is said in the field's description.

/** Where `spec.chart.spec` may take a chart from: the HelmChart the operator creates reads it. */
export const HELM_RELEASE_CHART_SOURCE_KINDS = ['HelmRepository', 'GitRepository', 'OCIRepository'] as const;
/** What `spec.chartRef` may name: a chart artifact the user manages. */
export const HELM_RELEASE_CHART_REF_KINDS = ['OCIRepository', 'HelmChart'] as const;
export const CRD_POLICIES = ['Skip', 'Create', 'CreateReplace'] as const;
export const REMEDIATION_STRATEGIES = ['rollback', 'uninstall'] as const;
export const DRIFT_DETECTION_MODES = ['enabled', 'warn', 'disabled'] as const;
export const DELETION_PROPAGATIONS = ['background', 'foreground', 'orphan'] as const;
export const VALUES_REFERENCE_KINDS = ['ConfigMap', 'Secret'] as const;

export const HelmChartTemplateSpec = Type.Object({
  chart: Type.String({
    description: 'Chart name (HelmRepository) or path to the chart folder (GitRepository, OCIRepository).',
    minLength: 1,
    maxLength: 2048,
  }),
  version: Type.Optional(
    Type.String({ description: 'SemVer range of the chart version (HelmRepository only).', default: '*' }),
  ),
  sourceRef: Type.Object(
    {
      apiVersion: Type.Optional(Type.String({ description: 'API version of the source.' })),
      kind: StringEnum(HELM_RELEASE_CHART_SOURCE_KINDS, { description: 'Kind of the source.' }),
      name: Type.String({ description: 'Name of the source.', minLength: 1, maxLength: 253 }),
      namespace: Type.Optional(
        Type.String({ description: "Namespace of the source, the HelmRelease's by default." }),
      ),
    },
    { description: 'The source the chart comes from.' },
  ),
  interval: Type.Optional(
    Interval('How often the HelmChart checks its source; the HelmRelease interval by default.'),
  ),
  reconcileStrategy: Type.Optional(
    StringEnum(HELM_CHART_RECONCILE_STRATEGIES, {
      description: "'ChartVersion' (default): a new chart on a new version; 'Revision': on every revision.",
    }),
  ),
  valuesFiles: Type.Optional(
    Type.Array(Type.String(), {
      description: 'Values files in the chart, merged in order over values.yaml.',
    }),
  ),
  ignoreMissingValuesFiles: Type.Optional(
    Type.Boolean({ description: 'Skip valuesFiles that do not exist instead of failing.' }),
  ),
});
export type HelmChartTemplateSpec = Static<typeof HelmChartTemplateSpec>;

export const HelmChartTemplate = Type.Object({
  metadata: Type.Optional(
    Type.Object(
      {
        labels: Type.Optional(StringMap({ description: 'Labels of the HelmChart.' })),
        annotations: Type.Optional(StringMap({ description: 'Annotations of the HelmChart.' })),
      },
      { description: 'Metadata of the HelmChart the operator creates.' },
    ),
  ),
  spec: withDescription(HelmChartTemplateSpec, 'The HelmChart the operator creates and owns.'),
});

export const HelmChartReference = Type.Object({
  apiVersion: Type.Optional(Type.String({ description: 'API version of the referent.' })),
  kind: StringEnum(HELM_RELEASE_CHART_REF_KINDS, { description: 'Kind of the referent.' }),
  name: Type.String({ description: 'Name of the referent.', minLength: 1, maxLength: 253 }),
  namespace: Type.Optional(
    Type.String({ description: "Namespace of the referent, the HelmRelease's by default." }),
  ),
});
export type HelmChartReference = Static<typeof HelmChartReference>;

export const ValuesReference = Type.Object({
  kind: StringEnum(VALUES_REFERENCE_KINDS, { description: 'Kind of the object holding values.' }),
  name: Type.String({ description: 'Its name, in the HelmRelease namespace.', minLength: 1, maxLength: 253 }),
  valuesKey: Type.Optional(
    Type.String({ description: "Data key holding the values; 'values.yaml' by default.", maxLength: 253 }),
  ),
  targetPath: Type.Optional(
    Type.String({
      description: "Dotted path the key's value is set at (as --set), instead of merging it as YAML.",
      maxLength: 250,
    }),
  ),
  optional: Type.Optional(Type.Boolean({ description: 'Treat a missing object or key as empty.' })),
});
export type ValuesReference = Static<typeof ValuesReference>;

const Remediation = (what: string, strategy: boolean) =>
  Type.Object({
    retries: Type.Optional(
      Type.Integer({
        description: `Times a failed ${what} is remediated and retried; -1 without end, 0 (default) never.`,
        minimum: -1,
      }),
    ),
    ignoreTestFailures: Type.Optional(
      Type.Boolean({ description: `A failed test does not count as a failed ${what}.` }),
    ),
    remediateLastFailure: Type.Optional(
      Type.Boolean({ description: 'Remediate the last failure too, once retries are exhausted.' }),
    ),
    ...(strategy
      ? {
          strategy: Type.Optional(
            StringEnum(REMEDIATION_STRATEGIES, {
              description: "'rollback' (default) to the last deployed release, or 'uninstall'.",
            }),
          ),
        }
      : {}),
  });

const WaitOptions = {
  disableWait: Type.Optional(Type.Boolean({ description: 'Do not wait for the objects to be healthy.' })),
  disableWaitForJobs: Type.Optional(Type.Boolean({ description: 'Do not wait for Jobs to complete.' })),
  disableHooks: Type.Optional(Type.Boolean({ description: 'Do not run hooks.' })),
};

const ActionTimeout = (what: string) =>
  Type.Optional(Timeout(`Time a ${what} may take, hooks and waits included; spec.timeout by default.`));

export const Install = Type.Object({
  timeout: ActionTimeout('install'),
  remediation: Type.Optional(withDescription(Remediation('install', false), 'What a failed install does.')),
  ...WaitOptions,
  crds: Type.Optional(
    StringEnum(CRD_POLICIES, {
      description: "CRDs in the chart's crds/ folder: 'Create' (default) or 'Skip'.",
    }),
  ),
  createNamespace: Type.Optional(Type.Boolean({ description: 'Create the target namespace if missing.' })),
  replace: Type.Optional(
    Type.Boolean({ description: 'Reuse the name of a release that failed or was uninstalled.' }),
  ),
});

export const Upgrade = Type.Object({
  timeout: ActionTimeout('upgrade'),
  remediation: Type.Optional(withDescription(Remediation('upgrade', true), 'What a failed upgrade does.')),
  ...WaitOptions,
  crds: Type.Optional(
    StringEnum(CRD_POLICIES, {
      description: "CRDs in crds/: 'Skip' (default, as Helm), 'Create' new ones or 'CreateReplace' them all.",
    }),
  ),
  force: Type.Optional(Type.Boolean({ description: 'Recreate objects whose immutable fields changed.' })),
  preserveValues: Type.Optional(Type.Boolean({ description: "Reuse the last release's values." })),
  cleanupOnFail: Type.Optional(Type.Boolean({ description: 'Delete objects a failed upgrade created.' })),
});

export const Rollback = Type.Object({
  timeout: ActionTimeout('rollback'),
  ...WaitOptions,
  force: Type.Optional(Type.Boolean({ description: 'Recreate objects whose immutable fields changed.' })),
  cleanupOnFail: Type.Optional(Type.Boolean({ description: 'Delete objects a failed rollback created.' })),
});

export const Uninstall = Type.Object({
  timeout: ActionTimeout('uninstall'),
  disableHooks: Type.Optional(Type.Boolean({ description: 'Do not run pre- and post-delete hooks.' })),
  keepHistory: Type.Optional(Type.Boolean({ description: 'Keep the release records, marked uninstalled.' })),
  disableWait: Type.Optional(Type.Boolean({ description: 'Do not wait for the objects to be deleted.' })),
  deletionPropagation: Type.Optional(
    StringEnum(DELETION_PROPAGATIONS, {
      description: "How dependents are deleted; 'background' by default.",
    }),
  ),
});

export const Test = Type.Object({
  enable: Type.Optional(
    Type.Boolean({ description: "Run the chart's test hooks after each install and upgrade." }),
  ),
  timeout: ActionTimeout('test run'),
  ignoreFailures: Type.Optional(Type.Boolean({ description: 'A failed test does not fail the release.' })),
  filters: Type.Optional(
    Type.Array(
      Type.Object({
        name: Type.String({ description: 'Name of the test hook.' }),
        exclude: Type.Optional(Type.Boolean({ description: 'Skip it instead of running only it.' })),
      }),
      { description: 'Which tests run.' },
    ),
  ),
});

export const DriftDetection = Type.Object({
  mode: Type.Optional(
    StringEnum(DRIFT_DETECTION_MODES, {
      description:
        "'enabled' (Mooring's default; Flux's is 'disabled'): a changed object is put back; 'warn': it is reported; 'disabled'.",
    }),
  ),
  ignore: Type.Optional(Type.Array(DriftIgnoreRule, { description: 'Fields whose drift is ignored.' })),
});

export const PostRenderer = Type.Object({
  kustomize: Type.Optional(
    Type.Object(
      {
        patches: Type.Optional(Type.Array(Patch, { description: 'Kustomize patches.' })),
        images: Type.Optional(Type.Array(ImageOverride, { description: 'Kustomize image overrides.' })),
      },
      { description: 'Kustomize patches and images over the rendered objects.' },
    ),
  ),
});

export const HelmReleaseSpec = Type.Object(
  {
    chart: Type.Optional(
      withDescription(HelmChartTemplate, 'The chart, through a HelmChart the operator owns.'),
    ),
    chartRef: Type.Optional(withDescription(HelmChartReference, 'The chart, from an existing artifact.')),
    interval: Interval('How often to reconcile and correct drift.'),
    timeout: Type.Optional(Timeout('Time an action may take; 5m by default.', { hours: true })),
    releaseName: Type.Optional(
      Type.String({
        description: 'Helm release name; [<targetNamespace>-]<name> by default.',
        minLength: 1,
        maxLength: 53,
      }),
    ),
    targetNamespace: Type.Optional(
      Type.String({ description: "Namespace of the release's objects.", minLength: 1, maxLength: 63 }),
    ),
    storageNamespace: Type.Optional(
      Type.String({
        description: 'Namespace of the release records; targetNamespace by default.',
        minLength: 1,
        maxLength: 63,
      }),
    ),
    maxHistory: Type.Optional(
      Type.Integer({ description: 'Release records kept; 5 by default, 0 for all.', minimum: 0 }),
    ),
    values: Type.Optional(FreeObject({ description: 'Values merged over valuesFrom (last).' })),
    valuesFrom: Type.Optional(
      Type.Array(ValuesReference, { description: 'ConfigMaps and Secrets with values, merged in order.' }),
    ),
    dependsOn: Type.Optional(
      Type.Array(DependencyReference, {
        description: 'HelmReleases and Kustomizations that must be ready first.',
      }),
    ),
    serviceAccountName: Type.Optional(
      Type.String({ description: 'ServiceAccount to impersonate for every read and write of the release.' }),
    ),
    kubeConfig: Type.Optional(withDescription(KubeConfigReference, 'Release to a remote cluster.')),
    install: Type.Optional(withDescription(Install, 'How the release is installed.')),
    upgrade: Type.Optional(withDescription(Upgrade, 'How the release is upgraded.')),
    rollback: Type.Optional(withDescription(Rollback, 'How a remediation rolls back.')),
    uninstall: Type.Optional(withDescription(Uninstall, 'How the release is uninstalled.')),
    test: Type.Optional(withDescription(Test, "How the chart's tests run.")),
    driftDetection: Type.Optional(withDescription(DriftDetection, 'What a change made on the cluster does.')),
    postRenderers: Type.Optional(
      Type.Array(PostRenderer, { description: 'Applied in order to the rendered objects.' }),
    ),
    healthCheckExprs: Type.Optional(
      Type.Array(CustomHealthCheck, { description: 'CEL health rules for custom resources.' }),
    ),
    suspend: Type.Optional(Type.Boolean({ description: 'Stop reconciling this object.' })),
  },
  {
    description: 'A Helm release, kept equal to its chart and values.',
    ...cel({
      rule: 'has(self.chart) != has(self.chartRef)',
      message: 'set exactly one of chart and chartRef',
    }),
  },
);
export type HelmReleaseSpec = Static<typeof HelmReleaseSpec>;

/** One release of the history (Flux's Snapshot), newest first. */
export const ReleaseSnapshot = Type.Object({
  name: Type.String({ description: 'Release name.' }),
  namespace: Type.String({ description: 'Namespace of the release record.' }),
  version: Int64({ description: 'Helm release version (revision).' }),
  status: Type.String({ description: 'Helm release status: deployed, superseded, failed, ...' }),
  chartName: Type.String({ description: 'Chart name.' }),
  chartVersion: Type.String({ description: 'Chart version.' }),
  appVersion: Type.Optional(Type.String({ description: 'Chart appVersion.' })),
  configDigest: Type.String({ description: 'sha256 of the values the release was made with.' }),
  digest: Type.String({ description: 'sha256 of the release manifest.' }),
  firstDeployed: DateTime(),
  lastDeployed: DateTime(),
  deleted: Type.Optional(DateTime()),
  testHooks: Type.Optional(
    StringMap({ description: 'Result of each test hook of the last test run: Succeeded or Failed.' }),
  ),
});
export type ReleaseSnapshot = Static<typeof ReleaseSnapshot>;

export const HelmReleaseStatus = ReconcileStatus(
  {
    helmChart: Type.Optional(Type.String({ description: '<namespace>/<name> of the HelmChart used.' })),
    storageNamespace: Type.Optional(Type.String({ description: 'Namespace of the release records.' })),
    history: Type.Optional(
      Type.Array(ReleaseSnapshot, { description: 'Releases, newest first, at most 5.' }),
    ),
    lastAttemptedRevision: Type.Optional(Type.String({ description: 'Chart revision last attempted.' })),
    lastAttemptedConfigDigest: Type.Optional(
      Type.String({ description: 'Digest of the values last attempted.' }),
    ),
    lastAttemptedReleaseAction: Type.Optional(
      StringEnum(['install', 'upgrade'] as const, { description: 'The action last attempted.' }),
    ),
    failures: Type.Optional(Int64({ description: 'Failed reconciles since the last success.' })),
    installFailures: Type.Optional(Int64({ description: 'Failed installs since the last success.' })),
    upgradeFailures: Type.Optional(Int64({ description: 'Failed upgrades since the last success.' })),
    lastHandledForceAt: Type.Optional(
      Type.String({ description: 'Last handled reconcile.mooring.dev/forceAt.' }),
    ),
    lastHandledRollbackAt: Type.Optional(
      Type.String({ description: 'Last handled value of the helm.mooring.dev/rollbackTo annotation.' }),
    ),
    rollbackHold: Type.Optional(
      Type.Object(
        {
          version: Int64({ description: 'The Helm revision rolled back to.' }),
          chartRevision: Type.String({
            description: 'Chart revision desired when the rollback was asked for.',
          }),
          configDigest: Type.String({ description: 'Digest of the values desired then.' }),
        },
        {
          description:
            'A rollback asked for by a user, kept (drift corrected against it) until the chart or values change.',
        },
      ),
    ),
    inventory: Type.Optional(withDescription(ResourceInventory, 'Objects of the deployed release.')),
  },
  'Observed state of the HelmRelease.',
);
export type HelmReleaseStatus = Static<typeof HelmReleaseStatus>;

export const HelmRelease = KubeObject(HELM_API_VERSION, 'HelmRelease', HelmReleaseSpec, HelmReleaseStatus);
export type HelmRelease = Static<typeof HelmRelease>;

/** Namespace of the release's objects: spec.targetNamespace, else the HelmRelease's. */
export function releaseTargetNamespace(hr: Pick<HelmRelease, 'metadata' | 'spec'>): string {
  return hr.spec.targetNamespace ?? hr.metadata.namespace ?? 'default';
}

/** Namespace of the release records: spec.storageNamespace, else the target namespace (Flux's rule). */
export function releaseStorageNamespace(hr: Pick<HelmRelease, 'metadata' | 'spec'>): string {
  return hr.spec.storageNamespace ?? releaseTargetNamespace(hr);
}

/**
 * The Helm release name: spec.releaseName, else `[<targetNamespace>-]<name>`, shortened as
 * Flux shortens it past Helm's 53 characters (40 of them, a dash, 12 hex of its sha256), so a
 * release Flux made is found under the same name.
 */
export function releaseNameOf(hr: Pick<HelmRelease, 'metadata' | 'spec'>): string {
  if (hr.spec.releaseName) return hr.spec.releaseName;
  const name = hr.metadata.name ?? '';
  const full = hr.spec.targetNamespace ? `${hr.spec.targetNamespace}-${name}` : name;
  if (full.length <= 53) return full;
  return `${full.slice(0, 40)}-${createHash('sha256').update(full).digest('hex').slice(0, 12)}`;
}
