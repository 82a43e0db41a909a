import { type Static, Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { DURATION_MAX_LENGTH, DURATION_PATTERN, Interval, LabelSelector, ReconcileStatus } from './common.ts';
import { HELM_API_VERSION, KUSTOMIZE_API_VERSION } from './groups.ts';
import { HelmReleaseSpec } from './helm-release.ts';
import { SOURCE_KINDS } from './kind-registry.ts';
import { KustomizationSpec } from './kustomization.ts';
import { KubeObject } from './object.ts';
import { DateTime, FreeObject, Int64, StringEnum, StringMap, withDescription } from './schema-kit.ts';

// A fleet of Kustomizations from one template: generators make parameter sets ("elements"), the
// template renders one Kustomization per element, and a rolling update moves a change across them
// in steps. Matrix and merge nest one level only (as ApplicationSet's do): a CRD schema cannot recurse.

/** Label every cluster Secret carries; its value is the cluster's name unless empty. */
export const CLUSTER_SECRET_LABEL = 'mooring.dev/cluster';
/** Labels on each generated Kustomization naming the set that owns it. */
export const KUSTOMIZATION_SET_NAME_LABEL = 'kustomize.mooring.dev/set-name';
/** sha256 (first 16 hex) of the rendered spec: which revision of the template the object holds. */
export const KUSTOMIZATION_SET_REVISION_ANNOTATION = 'kustomize.mooring.dev/set-revision';
/** On each member a set commits to Git (delivery mode git): `<namespace>/<name>` of the set that wrote it. */
export const KUSTOMIZATION_SET_ANNOTATION = 'kustomize.mooring.dev/set';
/** Default folder, per element, a set in delivery mode git writes its member to. */
export const DEFAULT_FLEET_PATH = 'clusters/{{ .cluster.name }}';
/** Finalizer a set puts on the cluster Secrets it uses, so a removed cluster can still be pruned. */
export const KUSTOMIZATION_SET_FINALIZER = 'kustomize.mooring.dev/kustomizationset';

export const SET_DELETION_POLICIES = ['Delete', 'Orphan'] as const;

export const ListGenerator = Type.Object({
  elements: Type.Array(FreeObject({ description: 'One element: its keys are the parameters.' }), {
    description: 'Inline elements.',
  }),
});

export const ClustersGenerator = Type.Object({
  selector: Type.Optional(
    withDescription(
      LabelSelector,
      'Cluster Secrets to use, all of those labelled mooring.dev/cluster by default.',
    ),
  ),
  values: Type.Optional(
    StringMap({ description: 'Extra parameters under .values, the same for every cluster.' }),
  ),
});

export const ArtifactGeneratorSource = Type.Object({
  kind: StringEnum(SOURCE_KINDS, { description: 'Kind of the source.' }),
  name: Type.String({ description: 'Name of the source.' }),
  namespace: Type.Optional(Type.String({ description: "Its namespace, the set's by default." })),
});

export const DirectoriesGenerator = Type.Object({
  sourceRef: withDescription(ArtifactGeneratorSource, 'Source whose artifact holds the folders.'),
  paths: Type.Array(Type.String(), {
    minItems: 1,
    description:
      'Globs of folders (`*` within a segment, `**` across); each match is an element: .directory.path, .directory.name.',
  }),
  exclude: Type.Optional(Type.Array(Type.String(), { description: 'Globs of folders left out.' })),
});

export const FilesGenerator = Type.Object({
  sourceRef: withDescription(ArtifactGeneratorSource, 'Source whose artifact holds the files.'),
  paths: Type.Array(Type.String(), {
    minItems: 1,
    description:
      'Globs of YAML or JSON files; a file holding a map is one element, a list one element per item, with .file.path and .file.name beside its keys.',
  }),
});

const leafGenerators = {
  list: Type.Optional(withDescription(ListGenerator, 'Inline elements.')),
  clusters: Type.Optional(
    withDescription(
      ClustersGenerator,
      'One element per cluster Secret (a kubeconfig Secret labelled mooring.dev/cluster) in this namespace: .cluster.name, .cluster.secretName, .cluster.labels.*, .cluster.annotations.*.',
    ),
  ),
  directories: Type.Optional(
    withDescription(DirectoriesGenerator, 'One element per matching folder of a source artifact.'),
  ),
  files: Type.Optional(
    withDescription(FilesGenerator, 'Elements read from YAML or JSON files of a source artifact.'),
  ),
};

export const LeafGenerator = Type.Object(leafGenerators);
export type LeafGenerator = Static<typeof LeafGenerator>;

export const Generator = Type.Object({
  ...leafGenerators,
  matrix: Type.Optional(
    Type.Object(
      { generators: Type.Array(LeafGenerator, { minItems: 2, maxItems: 2 }) },
      { description: "Every pair of the two generators' elements, their parameters merged." },
    ),
  ),
  merge: Type.Optional(
    Type.Object(
      {
        mergeKeys: Type.Array(Type.String(), {
          minItems: 1,
          description: 'Dotted parameter paths that match elements.',
        }),
        generators: Type.Array(LeafGenerator, { minItems: 1 }),
      },
      {
        description:
          "The first generator's elements, each overlaid by the later generators' elements with the same merge keys.",
      },
    ),
  ),
});
export type Generator = Static<typeof Generator>;

/** The kinds a set's template may make, one kind per set. */
export const SET_MEMBER_KINDS = ['Kustomization', 'HelmRelease'] as const;
export type SetMemberKind = (typeof SET_MEMBER_KINDS)[number];
/** The API version each member kind is written at. */
export const SET_MEMBER_API_VERSIONS: Record<SetMemberKind, string> = {
  Kustomization: KUSTOMIZE_API_VERSION,
  HelmRelease: HELM_API_VERSION,
};

export const KustomizationTemplate = Type.Object({
  apiVersion: Type.Optional(
    StringEnum([KUSTOMIZE_API_VERSION, HELM_API_VERSION] as const, {
      description: "API version of the generated objects; the kind's own by default.",
    }),
  ),
  kind: Type.Optional(
    StringEnum(SET_MEMBER_KINDS, {
      description: "Kind of the generated objects: 'Kustomization' (default) or 'HelmRelease'.",
    }),
  ),
  metadata: Type.Object({
    name: Type.String({
      description: 'Name of each generated object; must use a parameter to be unique.',
      minLength: 1,
    }),
    labels: Type.Optional(StringMap({ description: 'Labels of each generated object (templated).' })),
    annotations: Type.Optional(
      StringMap({ description: 'Annotations of each generated object (templated).' }),
    ),
  }),
  spec: FreeObject({
    description:
      "The generated kind's spec (a Kustomization's or a HelmRelease's); every string may hold {{ .param.path }} expressions.",
  }),
});
export type KustomizationTemplate = Static<typeof KustomizationTemplate>;

export const RolloutStep = Type.Object({
  selector: Type.Optional(
    withDescription(LabelSelector, "Elements in this step, by their labels (a cluster's Secret labels)."),
  ),
  maxUnavailable: Type.Optional(
    Type.String({
      description:
        "How many of this step's Kustomizations may be updating at once: a count or a percent; all by default.",
      pattern: '^[0-9]+%?$',
    }),
  ),
  // A pattern, not Interval's CEL bounds: a CEL rule per array item exceeds the CRD's cost budget.
  soakTime: Type.Optional(
    Type.String({
      description: 'How long the step must stay Ready before the next begins (Go duration); 0s by default.',
      pattern: DURATION_PATTERN,
      maxLength: DURATION_MAX_LENGTH,
    }),
  ),
});
export type RolloutStep = Static<typeof RolloutStep>;

export const SET_DELIVERY_MODES = ['push', 'git'] as const;

export const SetDelivery = Type.Object({
  mode: StringEnum(SET_DELIVERY_MODES, {
    description:
      "'push' (default): members are made on this cluster and apply remotely through their spec.kubeConfig. 'git': each element's member is committed to a fleet repository as <path>/<set name>.yaml, for the agent on that cluster (Mooring from `bootstrap git`) to apply.",
  }),
  gitRepositoryRef: Type.Optional(
    Type.Object(
      { name: Type.String({ minLength: 1, description: 'Name of the GitRepository, in this namespace.' }) },
      {
        description:
          'The fleet repository (mode git): its URL, branch and credentials (spec.secretRef, which must allow pushing) are used.',
      },
    ),
  ),
  branch: Type.Optional(
    Type.String({ description: "Branch committed to; the GitRepository's spec.ref.branch by default." }),
  ),
  path: Type.Optional(
    Type.String({
      description:
        'Folder of each element in the repository (templated, relative); clusters/{{ .cluster.name }} by default.',
    }),
  ),
  author: Type.Optional(
    Type.Object(
      {
        name: Type.Optional(Type.String({ description: 'Mooring by default.' })),
        email: Type.Optional(Type.String({ description: 'mooring@localhost by default.' })),
      },
      { description: 'Author of the commits.' },
    ),
  ),
});
export type SetDelivery = Static<typeof SetDelivery>;

export const KustomizationSetSpec = Type.Object({
  generators: Type.Array(Generator, {
    minItems: 1,
    description: 'Parameter generators; their elements are concatenated.',
  }),
  template: withDescription(
    KustomizationTemplate,
    'The Kustomization (or, with kind HelmRelease, the HelmRelease) made for each element.',
  ),
  strategy: Type.Optional(
    Type.Object({
      rollingUpdate: Type.Optional(
        Type.Object({
          steps: Type.Array(RolloutStep, {
            maxItems: 32,
            description: 'Waves in order; an element matching no step is in a last, implicit one.',
          }),
          paused: Type.Optional(
            Type.Boolean({ description: 'Update no existing Kustomization until unset.' }),
          ),
        }),
      ),
    }),
  ),
  delivery: Type.Optional(
    withDescription(
      SetDelivery,
      'How members reach their clusters: pushed through spec.kubeConfig (default), or committed to a fleet repository each cluster pulls.',
    ),
  ),
  deletionPolicy: Type.Optional(
    StringEnum(SET_DELETION_POLICIES, {
      description:
        "What happens to a Kustomization whose element disappeared: 'Delete' (default; its own deletionPolicy then decides its objects) or 'Orphan'.",
    }),
  ),
  interval: Interval('How often to generate again (cluster Secrets are read then).'),
  suspend: Type.Optional(Type.Boolean({ description: 'Stop reconciling this set.' })),
});
export type KustomizationSetSpec = Static<typeof KustomizationSetSpec>;

export const FleetMember = Type.Object({
  name: Type.String({ description: "The element's name: the cluster's, else the Kustomization's." }),
  kustomization: Type.String({
    description: 'Name of the generated object: a Kustomization, or a HelmRelease when kind says so.',
  }),
  kind: Type.Optional(
    StringEnum(SET_MEMBER_KINDS, { description: 'Kind of the generated object; Kustomization when absent.' }),
  ),
  revision: Type.Optional(Type.String({ description: 'Template revision its spec holds.' })),
  appliedRevision: Type.Optional(
    Type.String({
      description:
        "What it last applied: a Kustomization's source revision, a HelmRelease's <chart>@<version> of its latest release.",
    }),
  ),
  releaseVersion: Type.Optional(Int64({ description: 'Helm release version (HelmRelease members).' })),
  ready: StringEnum(['True', 'False', 'Unknown'], { description: 'Its Ready status.' }),
  state: StringEnum(['Current', 'Updating', 'Outdated', 'Failed', 'Unreachable', 'Orphaned', 'Committed'], {
    description:
      "Where it stands in the rollout; 'Committed' (delivery mode git): its file is committed but its cluster cannot be read for Ready.",
  }),
  path: Type.Optional(Type.String({ description: 'Its file in the fleet repository (delivery mode git).' })),
  commit: Type.Optional(
    Type.String({ description: 'The commit that wrote its file as it is (delivery mode git).' }),
  ),
  message: Type.Optional(Type.String({ description: 'Last error or Ready message.' })),
  readySince: Type.Optional(DateTime({ description: 'When it was first seen Ready at this revision.' })),
  lastTransitionTime: Type.Optional(DateTime()),
});
export type FleetMember = Static<typeof FleetMember>;

export const KustomizationSetStatus = ReconcileStatus(
  {
    revision: Type.Optional(Type.String({ description: 'Template revision being rolled out.' })),
    rollout: Type.Optional(
      Type.Object({
        step: Int64({ description: 'Step in progress, from 1; 0 when done.' }),
        phase: StringEnum(['Progressing', 'Paused', 'Failed', 'Complete'], { description: 'Rollout phase.' }),
        message: Type.Optional(Type.String()),
      }),
    ),
    members: Type.Optional(Type.Array(FleetMember, { description: 'One entry per element.' })),
    counts: Type.Optional(
      Type.Object({
        total: Int64(),
        ready: Int64(),
        current: Int64(),
        failed: Int64(),
        unreachable: Int64(),
      }),
    ),
  },
  'Observed state of the fleet.',
);
export type KustomizationSetStatus = Static<typeof KustomizationSetStatus>;

export const KustomizationSet = KubeObject(
  KUSTOMIZE_API_VERSION,
  'KustomizationSet',
  KustomizationSetSpec,
  KustomizationSetStatus,
);
export type KustomizationSet = Static<typeof KustomizationSet>;

function schemaError(schema: typeof KustomizationSpec | typeof HelmReleaseSpec, spec: unknown) {
  if (Value.Check(schema, spec)) return undefined;
  const first = [...Value.Errors(schema, spec)][0];
  return `${first?.path || '/'}: ${first?.message ?? 'invalid'}`;
}

/** The first reason `spec` is not a valid Kustomization spec (schema only, no CEL), else undefined. */
export function kustomizationSpecError(spec: unknown): string | undefined {
  return schemaError(KustomizationSpec, spec);
}

/** The first reason `spec` is not a valid HelmRelease spec (schema, and its one CEL rule), else undefined. */
export function helmReleaseSpecError(spec: unknown): string | undefined {
  const invalid = schemaError(HelmReleaseSpec, spec);
  if (invalid) return invalid;
  const s = spec as HelmReleaseSpec;
  // The CRD's CEL rule, which Value.Check does not run: the API server would refuse the write.
  if (!s.chart === !s.chartRef) return '/: set exactly one of chart and chartRef';
  return undefined;
}
