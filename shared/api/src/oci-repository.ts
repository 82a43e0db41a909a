import { type Static, Type } from '@sinclair/typebox';
import { Artifact, Interval, ReconcileStatus, SecretRef, Timeout } from './common.ts';
import { SOURCE_API_VERSION } from './groups.ts';
import { KubeObject } from './object.ts';
import { cel, StringEnum, withDescription } from './schema-kit.ts';

export const OCI_PROVIDERS = ['generic', 'aws', 'azure', 'gcp'] as const;
export const OCI_LAYER_OPERATIONS = ['extract', 'copy'] as const;
export const OCI_VERIFICATION_PROVIDERS = ['cosign', 'notation'] as const;

/**
 * What to pull. Flux accepts several fields and applies precedence digest > semver > tag;
 * Mooring rejects more than one, since the ignored ones only mislead the reader.
 */
export const OCIRepositoryRef = Type.Object(
  {
    digest: Type.Optional(Type.String({ description: 'Manifest digest to pull, sha256:<hex>.' })),
    semver: Type.Optional(Type.String({ description: 'SemVer range; the highest matching tag is pulled.' })),
    semverFilter: Type.Optional(
      Type.String({ description: 'Regular expression the tags in the semver range must match.' }),
    ),
    tag: Type.Optional(Type.String({ description: "Tag to pull, 'latest' when nothing is set." })),
  },
  cel(
    {
      rule: '(has(self.tag) ? 1 : 0) + (has(self.semver) ? 1 : 0) + (has(self.digest) ? 1 : 0) <= 1',
      message: 'at most one of tag, semver and digest may be set',
    },
    { rule: '!has(self.semverFilter) || has(self.semver)', message: 'semverFilter requires semver' },
  ),
);
export type OCIRepositoryRef = Static<typeof OCIRepositoryRef>;

export const OCILayerSelector = Type.Object({
  mediaType: Type.Optional(Type.String({ description: 'Media type of the layer; the first match is used.' })),
  operation: Type.Optional(
    StringEnum(OCI_LAYER_OPERATIONS, {
      description: "'extract' (default) unpacks the layer, 'copy' stores it as it is.",
    }),
  ),
});
export type OCILayerSelector = Static<typeof OCILayerSelector>;

export const OCIRepositoryVerification = Type.Object({
  provider: StringEnum(OCI_VERIFICATION_PROVIDERS, {
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
  trustedRootSecretRef: Type.Optional(SecretRef('with a Sigstore trusted_root.json.')),
});

export const OCIRepositorySpec = Type.Object(
  {
    url: Type.String({
      description: 'Repository in a registry, oci://<host>/<path>.',
      pattern: '^oci://.*$',
    }),
    ref: Type.Optional(withDescription(OCIRepositoryRef, "What to pull, tag 'latest' by default.")),
    layerSelector: Type.Optional(
      withDescription(OCILayerSelector, 'Which layer becomes the artifact; the first by default.'),
    ),
    provider: Type.Optional(
      StringEnum(OCI_PROVIDERS, { description: 'Registry authentication provider.', default: 'generic' }),
    ),
    secretRef: Type.Optional(SecretRef('of type kubernetes.io/dockerconfigjson with registry credentials.')),
    verify: Type.Optional(withDescription(OCIRepositoryVerification, 'Verify the artifact signature.')),
    serviceAccountName: Type.Optional(
      Type.String({ description: 'ServiceAccount whose image pull secrets or identity are used.' }),
    ),
    certSecretRef: Type.Optional(SecretRef('with tls.crt, tls.key and/or ca.crt.')),
    proxySecretRef: Type.Optional(SecretRef('with the proxy address, username and password.')),
    interval: Interval('How often the repository is checked for new revisions.'),
    timeout: Type.Optional(Timeout('Timeout of registry operations.', { default: '60s' })),
    ignore: Type.Optional(
      Type.String({ description: 'Exclusion patterns in .gitignore syntax; replace the defaults.' }),
    ),
    insecure: Type.Optional(Type.Boolean({ description: 'Allow a plain-HTTP registry.' })),
    suspend: Type.Optional(Type.Boolean({ description: 'Stop reconciling this object.' })),
  },
  { description: 'Which OCI artifact to package as an artifact.' },
);
export type OCIRepositorySpec = Static<typeof OCIRepositorySpec>;

export const OCIRepositoryStatus = ReconcileStatus(
  {
    url: Type.Optional(Type.String({ description: 'Download address of the latest artifact.' })),
    artifact: Type.Optional(withDescription(Artifact, 'Artifact of the last successful reconcile.')),
    observedIgnore: Type.Optional(Type.String({ description: 'spec.ignore the artifact was built with.' })),
    observedLayerSelector: Type.Optional(
      withDescription(OCILayerSelector, 'spec.layerSelector the artifact was built with.'),
    ),
  },
  'Observed state of the OCIRepository.',
);
export type OCIRepositoryStatus = Static<typeof OCIRepositoryStatus>;

export const OCIRepository = KubeObject(
  SOURCE_API_VERSION,
  'OCIRepository',
  OCIRepositorySpec,
  OCIRepositoryStatus,
);
export type OCIRepository = Static<typeof OCIRepository>;
