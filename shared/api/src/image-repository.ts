import { type Static, Type } from '@sinclair/typebox';
import { AccessFrom, Interval, ReconcileStatus, SecretRef, Timeout } from './common.ts';
import { IMAGE_API_VERSION } from './groups.ts';
import { KubeObject } from './object.ts';
import { DateTime, StringEnum, withDescription } from './schema-kit.ts';

export const IMAGE_PROVIDERS = ['generic', 'aws', 'azure', 'gcp'] as const;

export const ImageRepositorySpec = Type.Object(
  {
    image: Type.String({ description: 'Image repository to scan, e.g. ghcr.io/org/app.' }),
    interval: Interval('How often tags are listed.'),
    timeout: Type.Optional(Timeout('Timeout of a scan, interval by default.')),
    secretRef: Type.Optional(SecretRef('of type kubernetes.io/dockerconfigjson with registry credentials.')),
    provider: Type.Optional(
      StringEnum(IMAGE_PROVIDERS, { description: 'Registry authentication provider.', default: 'generic' }),
    ),
    serviceAccountName: Type.Optional(
      Type.String({ description: 'ServiceAccount whose pull secrets or identity are used.', maxLength: 253 }),
    ),
    certSecretRef: Type.Optional(SecretRef('with tls.crt, tls.key and/or ca.crt.')),
    proxySecretRef: Type.Optional(SecretRef('with the proxy address, username and password.')),
    insecure: Type.Optional(Type.Boolean({ description: 'Allow a plain-HTTP registry.' })),
    exclusionList: Type.Optional(
      Type.Array(Type.String(), {
        description: 'Regular expressions of tags not to store.',
        maxItems: 25,
        default: ['^.*\\.sig$'],
      }),
    ),
    accessFrom: Type.Optional(
      withDescription(AccessFrom, 'Namespaces whose ImagePolicies may use this repository.'),
    ),
    suspend: Type.Optional(Type.Boolean({ description: 'Stop scanning.' })),
  },
  { description: 'An image repository whose tags are scanned.' },
);
export type ImageRepositorySpec = Static<typeof ImageRepositorySpec>;

export const ScanResult = Type.Object({
  revision: Type.Optional(Type.String({ description: 'Stable hash of the tag set.' })),
  tagCount: Type.Integer({ description: 'Number of tags stored.' }),
  scanTime: Type.Optional(DateTime({ description: 'When the scan finished.' })),
  latestTags: Type.Optional(Type.Array(Type.String(), { description: 'A sample of the newest tags.' })),
});
export type ScanResult = Static<typeof ScanResult>;

export const ImageRepositoryStatus = ReconcileStatus(
  {
    canonicalImageName: Type.Optional(
      Type.String({ description: 'Image name with registry and path filled in.' }),
    ),
    lastScanResult: Type.Optional(withDescription(ScanResult, 'Outcome of the last scan.')),
    observedExclusionList: Type.Optional(
      Type.Array(Type.String(), { description: 'spec.exclusionList of the last scan.' }),
    ),
  },
  'Observed state of the ImageRepository.',
);
export type ImageRepositoryStatus = Static<typeof ImageRepositoryStatus>;

export const ImageRepository = KubeObject(
  IMAGE_API_VERSION,
  'ImageRepository',
  ImageRepositorySpec,
  ImageRepositoryStatus,
);
export type ImageRepository = Static<typeof ImageRepository>;
