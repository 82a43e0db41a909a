import { type Static, Type } from '@sinclair/typebox';
import { Artifact, Interval, ReconcileStatus, SecretRef } from './common.ts';
import { SOURCE_API_VERSION } from './groups.ts';
import { KubeObject } from './object.ts';
import { StringEnum, withDescription } from './schema-kit.ts';

/** The sources a HelmChart packages its chart from (Flux's Bucket has no Mooring twin; OCIRepository stands in). */
export const HELM_CHART_SOURCE_KINDS = ['HelmRepository', 'GitRepository', 'OCIRepository'] as const;
export const HELM_CHART_RECONCILE_STRATEGIES = ['ChartVersion', 'Revision'] as const;

export const HelmChartSourceReference = Type.Object({
  apiVersion: Type.Optional(Type.String({ description: 'API version of the source.' })),
  kind: StringEnum(HELM_CHART_SOURCE_KINDS, { description: 'Kind of the source.' }),
  name: Type.String({ description: 'Name of the source, in the namespace of the HelmChart.' }),
});
export type HelmChartSourceReference = Static<typeof HelmChartSourceReference>;

export const HelmChartVerification = Type.Object({
  provider: StringEnum(['cosign', 'notation'] as const, {
    description: 'Signature technology.',
    default: 'cosign',
  }),
  secretRef: Type.Optional(SecretRef('with the trusted public keys.')),
  matchOIDCIdentity: Type.Optional(
    Type.Array(
      Type.Object({
        issuer: Type.String({ description: 'Regular expression for the OIDC issuer.' }),
        subject: Type.String({ description: 'Regular expression for the identity subject.' }),
      }),
      { description: 'Keyless signing identities; any match verifies.' },
    ),
  ),
});

export const HelmChartSpec = Type.Object(
  {
    chart: Type.String({
      description:
        'Chart name (HelmRepository source) or path to the chart folder (GitRepository, OCIRepository).',
      minLength: 1,
    }),
    version: Type.Optional(
      Type.String({
        description: 'SemVer range of the chart version (HelmRepository only); the highest match is used.',
        default: '*',
      }),
    ),
    sourceRef: withDescription(HelmChartSourceReference, 'Where the chart comes from.'),
    interval: Interval('How often the source is checked for a new chart.'),
    reconcileStrategy: Type.Optional(
      StringEnum(HELM_CHART_RECONCILE_STRATEGIES, {
        description:
          "'ChartVersion': a new artifact when the chart version changes; 'Revision': on every new source revision.",
        default: 'ChartVersion',
      }),
    ),
    valuesFiles: Type.Optional(
      Type.Array(Type.String(), {
        description: 'Values files in the chart, merged in order and packaged as its values.yaml.',
      }),
    ),
    ignoreMissingValuesFiles: Type.Optional(
      Type.Boolean({ description: 'Skip valuesFiles that do not exist instead of failing.' }),
    ),
    verify: Type.Optional(
      withDescription(HelmChartVerification, 'Verify the chart signature (not supported yet).'),
    ),
    suspend: Type.Optional(Type.Boolean({ description: 'Stop reconciling this object.' })),
  },
  { description: 'A Helm chart packaged from a source.' },
);
export type HelmChartSpec = Static<typeof HelmChartSpec>;

export const HelmChartStatus = ReconcileStatus(
  {
    observedSourceArtifactRevision: Type.Optional(
      Type.String({ description: 'Revision of the source artifact the chart was built from.' }),
    ),
    observedChartName: Type.Optional(Type.String({ description: 'Name of the chart in the artifact.' })),
    observedValuesFiles: Type.Optional(
      Type.Array(Type.String(), { description: 'spec.valuesFiles the artifact was built with.' }),
    ),
    url: Type.Optional(Type.String({ description: 'Download address of the latest chart artifact.' })),
    artifact: Type.Optional(
      withDescription(Artifact, 'The packaged chart of the last successful reconcile.'),
    ),
  },
  'Observed state of the HelmChart.',
);
export type HelmChartStatus = Static<typeof HelmChartStatus>;

export const HelmChart = KubeObject(SOURCE_API_VERSION, 'HelmChart', HelmChartSpec, HelmChartStatus);
export type HelmChart = Static<typeof HelmChart>;
