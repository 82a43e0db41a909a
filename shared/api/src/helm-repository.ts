import { type Static, Type } from '@sinclair/typebox';
import { AccessFrom, Artifact, Interval, ReconcileStatus, SecretRef, Timeout } from './common.ts';
import { SOURCE_API_VERSION } from './groups.ts';
import { KubeObject } from './object.ts';
import { cel, StringEnum, withDescription } from './schema-kit.ts';

export const HELM_REPOSITORY_TYPES = ['default', 'oci'] as const;
export const HELM_REPOSITORY_PROVIDERS = ['generic', 'aws', 'azure', 'gcp'] as const;

export const HelmRepositorySpec = Type.Object(
  {
    url: Type.String({
      description: 'Chart repository address: http(s)://… for type default, oci://… for type oci.',
      pattern: '^(http|https|oci)://.*$',
    }),
    type: Type.Optional(
      StringEnum(HELM_REPOSITORY_TYPES, {
        description:
          "'default' (an HTTP(S) repository with an index.yaml) or 'oci' (charts in an OCI registry).",
        default: 'default',
      }),
    ),
    secretRef: Type.Optional(
      SecretRef('with username and password (basic auth) or bearerToken, or for type oci .dockerconfigjson.'),
    ),
    certSecretRef: Type.Optional(SecretRef('with tls.crt, tls.key and/or ca.crt.')),
    passCredentials: Type.Optional(
      Type.Boolean({
        description: 'Send the credentials to chart URLs on another host than the repository.',
      }),
    ),
    insecure: Type.Optional(Type.Boolean({ description: 'Allow a plain-HTTP OCI registry.' })),
    provider: Type.Optional(
      StringEnum(HELM_REPOSITORY_PROVIDERS, {
        description: 'OCI registry authentication provider.',
        default: 'generic',
      }),
    ),
    accessFrom: Type.Optional(withDescription(AccessFrom, 'Namespaces allowed to use this repository.')),
    interval: Type.Optional(Interval('How often the index is fetched again.')),
    timeout: Type.Optional(Timeout('Timeout of the index fetch.', { default: '60s' })),
    suspend: Type.Optional(Type.Boolean({ description: 'Stop reconciling this object.' })),
  },
  {
    description: 'A Helm chart repository.',
    ...cel(
      {
        rule: "!has(self.type) || self.type != 'oci' || self.url.startsWith('oci://')",
        message: "type 'oci' needs an oci:// URL",
      },
      {
        rule: "(has(self.type) && self.type == 'oci') || !self.url.startsWith('oci://')",
        message: "an oci:// URL needs type 'oci'",
      },
    ),
  },
);
export type HelmRepositorySpec = Static<typeof HelmRepositorySpec>;

export const HelmRepositoryStatus = ReconcileStatus(
  {
    url: Type.Optional(Type.String({ description: 'Download address of the latest index artifact.' })),
    artifact: Type.Optional(withDescription(Artifact, 'The index of the last successful reconcile.')),
  },
  'Observed state of the HelmRepository.',
);
export type HelmRepositoryStatus = Static<typeof HelmRepositoryStatus>;

export const HelmRepository = KubeObject(
  SOURCE_API_VERSION,
  'HelmRepository',
  HelmRepositorySpec,
  HelmRepositoryStatus,
);
export type HelmRepository = Static<typeof HelmRepository>;
