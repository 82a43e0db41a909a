import type { Alert } from './alert.ts';
import type { GitRepository } from './git-repository.ts';
import {
  HELM_API_VERSION,
  IMAGE_API_VERSION,
  KUSTOMIZE_API_VERSION,
  NOTIFICATION_API_VERSION,
  SOURCE_API_VERSION,
} from './groups.ts';
import type { HelmChart } from './helm-chart.ts';
import type { HelmRelease } from './helm-release.ts';
import type { HelmRepository } from './helm-repository.ts';
import type { ImagePolicy } from './image-policy.ts';
import type { ImageRepository } from './image-repository.ts';
import type { ImageUpdateAutomation } from './image-update-automation.ts';
import type { KindName } from './kinds.ts';
import type { Kustomization } from './kustomization.ts';
import type { KustomizationSet } from './kustomization-set.ts';
import type { OCIRepository } from './oci-repository.ts';
import type { Provider } from './provider.ts';
import type { Receiver } from './receiver.ts';

// Minimal valid objects, one per kind: what the API server must accept. References point at
// objects of the same samples (name 'sample') so a test can create them all in one namespace.

const gitRepository: GitRepository = {
  apiVersion: SOURCE_API_VERSION,
  kind: 'GitRepository',
  metadata: { name: 'sample' },
  spec: { url: 'https://example.com/org/repo.git', interval: '1m' },
};

const ociRepository: OCIRepository = {
  apiVersion: SOURCE_API_VERSION,
  kind: 'OCIRepository',
  metadata: { name: 'sample' },
  spec: { url: 'oci://registry.example.com/org/manifests', interval: '5m' },
};

const helmRepository: HelmRepository = {
  apiVersion: SOURCE_API_VERSION,
  kind: 'HelmRepository',
  metadata: { name: 'sample' },
  spec: { url: 'https://charts.example.com', interval: '10m' },
};

const helmChart: HelmChart = {
  apiVersion: SOURCE_API_VERSION,
  kind: 'HelmChart',
  metadata: { name: 'sample' },
  spec: { chart: 'podinfo', sourceRef: { kind: 'HelmRepository', name: 'sample' }, interval: '10m' },
};

const kustomization: Kustomization = {
  apiVersion: KUSTOMIZE_API_VERSION,
  kind: 'Kustomization',
  metadata: { name: 'sample' },
  spec: { sourceRef: { kind: 'GitRepository', name: 'sample' }, interval: '10m', prune: true },
};

const kustomizationSet: KustomizationSet = {
  apiVersion: KUSTOMIZE_API_VERSION,
  kind: 'KustomizationSet',
  metadata: { name: 'sample' },
  spec: {
    interval: '10m',
    generators: [{ clusters: { selector: { matchLabels: { fleet: 'edge' } } } }],
    template: {
      metadata: { name: 'agent-{{ .cluster.name }}' },
      spec: {
        sourceRef: { kind: 'GitRepository', name: 'sample' },
        interval: '10m',
        prune: true,
        kubeConfig: { secretRef: { name: '{{ .cluster.secretName }}' } },
      },
    },
    strategy: { rollingUpdate: { steps: [{ selector: { matchLabels: { env: 'staging' } } }] } },
  },
};

const provider: Provider = {
  apiVersion: NOTIFICATION_API_VERSION,
  kind: 'Provider',
  metadata: { name: 'sample' },
  spec: { type: 'generic', address: 'https://example.com/hook' },
};

const alert: Alert = {
  apiVersion: NOTIFICATION_API_VERSION,
  kind: 'Alert',
  metadata: { name: 'sample' },
  spec: { providerRef: { name: 'sample' }, eventSources: [{ kind: 'Kustomization', name: '*' }] },
};

const receiver: Receiver = {
  apiVersion: NOTIFICATION_API_VERSION,
  kind: 'Receiver',
  metadata: { name: 'sample' },
  spec: {
    type: 'generic',
    secretRef: { name: 'sample-token' },
    resources: [{ kind: 'GitRepository', name: 'sample' }],
  },
};

const imageRepository: ImageRepository = {
  apiVersion: IMAGE_API_VERSION,
  kind: 'ImageRepository',
  metadata: { name: 'sample' },
  spec: { image: 'ghcr.io/org/app', interval: '5m' },
};

const imagePolicy: ImagePolicy = {
  apiVersion: IMAGE_API_VERSION,
  kind: 'ImagePolicy',
  metadata: { name: 'sample' },
  spec: { imageRepositoryRef: { name: 'sample' }, policy: { semver: { range: '>=1.0.0' } } },
};

const imageUpdateAutomation: ImageUpdateAutomation = {
  apiVersion: IMAGE_API_VERSION,
  kind: 'ImageUpdateAutomation',
  metadata: { name: 'sample' },
  spec: {
    sourceRef: { kind: 'GitRepository', name: 'sample' },
    git: { commit: { author: { email: 'bot@example.com' } } },
    interval: '30m',
  },
};

const helmRelease: HelmRelease = {
  apiVersion: HELM_API_VERSION,
  kind: 'HelmRelease',
  metadata: { name: 'sample' },
  spec: {
    interval: '10m',
    chart: {
      spec: { chart: 'podinfo', version: '6.x', sourceRef: { kind: 'HelmRepository', name: 'sample' } },
    },
    values: { replicaCount: 2 },
  },
};

/** Any sample object. */
export type SampleObject =
  | GitRepository
  | OCIRepository
  | HelmRepository
  | HelmChart
  | Kustomization
  | KustomizationSet
  | HelmRelease
  | Provider
  | Alert
  | Receiver
  | ImageRepository
  | ImagePolicy
  | ImageUpdateAutomation;

const SAMPLES: Record<KindName, SampleObject> = {
  GitRepository: gitRepository,
  OCIRepository: ociRepository,
  HelmRepository: helmRepository,
  HelmChart: helmChart,
  Kustomization: kustomization,
  KustomizationSet: kustomizationSet,
  HelmRelease: helmRelease,
  Provider: provider,
  Alert: alert,
  Receiver: receiver,
  ImageRepository: imageRepository,
  ImagePolicy: imagePolicy,
  ImageUpdateAutomation: imageUpdateAutomation,
};

/** A fresh copy of the minimal valid object of `kind`, in `namespace` when given. */
export function sample(kind: KindName, namespace?: string): SampleObject {
  const copy = structuredClone(SAMPLES[kind]);
  if (namespace !== undefined) copy.metadata.namespace = namespace;
  return copy;
}

/** Fresh copies of every sample, sources first so references resolve in creation order. */
export function samples(namespace?: string): SampleObject[] {
  return (Object.keys(SAMPLES) as KindName[]).map((kind) => sample(kind, namespace));
}
