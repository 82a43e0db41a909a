import type { TSchema } from '@sinclair/typebox';
import { Alert, AlertSpec, AlertStatus } from './alert.ts';
import { GitRepository, GitRepositorySpec, GitRepositoryStatus } from './git-repository.ts';
import { HelmChart, HelmChartSpec, HelmChartStatus } from './helm-chart.ts';
import { HelmRelease, HelmReleaseSpec, HelmReleaseStatus } from './helm-release.ts';
import { HelmRepository, HelmRepositorySpec, HelmRepositoryStatus } from './helm-repository.ts';
import { ImagePolicy, ImagePolicySpec, ImagePolicyStatus } from './image-policy.ts';
import { ImageRepository, ImageRepositorySpec, ImageRepositoryStatus } from './image-repository.ts';
import {
  ImageUpdateAutomation,
  ImageUpdateAutomationSpec,
  ImageUpdateAutomationStatus,
} from './image-update-automation.ts';
import { KIND_REGISTRY, type KindName, type KindRegistration, kindVersion } from './kind-registry.ts';
import { Kustomization, KustomizationSpec, KustomizationStatus } from './kustomization.ts';
import { KustomizationSet, KustomizationSetSpec, KustomizationSetStatus } from './kustomization-set.ts';
import { OCIRepository, OCIRepositorySpec, OCIRepositoryStatus } from './oci-repository.ts';
import { Provider, ProviderSpec, ProviderStatus } from './provider.ts';
import { Receiver, ReceiverSpec, ReceiverStatus } from './receiver.ts';
import type { CelRule } from './schema-kit.ts';

/** A `kubectl get` column (apiextensions.k8s.io/v1 CustomResourceColumnDefinition). */
export interface PrinterColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  jsonPath: string;
  description?: string;
  /** 0 shows in the default view, 1 only with `-o wide`. */
  priority?: number;
}

/** A CEL rule and the path of the schema node it is attached to, e.g. `.spec.ref`. */
export interface LocatedCelRule extends CelRule {
  path: string;
}

/** Everything needed to serve, generate and validate one kind; its registration says who owns it. */
export interface KindDefinition extends KindRegistration {
  version: string;
  listKind: string;
  singular: string;
  shortNames: readonly string[];
  categories: readonly string[];
  printerColumns: readonly PrinterColumn[];
  spec: TSchema;
  status: TSchema;
  /** The whole object (apiVersion, kind, metadata, spec, status) for Value.Check. */
  object: TSchema;
  /** Every CEL rule in spec and status, for documentation and rule tests. */
  celRules: readonly LocatedCelRule[];
}

/** `kubectl get mooring` lists every Mooring object. */
export const CATEGORIES = ['mooring'] as const;

const readyColumns: PrinterColumn[] = [
  { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
  { name: 'Status', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].message' },
];

// The long Status message goes last, as in Flux; kind-specific columns come first.
function columns(...extra: PrinterColumn[]): PrinterColumn[] {
  return [...extra, ...readyColumns];
}

const sourceColumns = columns(
  { name: 'URL', type: 'string', jsonPath: '.spec.url', priority: 1 },
  { name: 'Revision', type: 'string', jsonPath: '.status.artifact.revision' },
);

/** Walks a schema and lists the CEL rules attached to its nodes. */
export function collectCelRules(schema: TSchema, path: string): LocatedCelRule[] {
  const rules: LocatedCelRule[] = [];
  const own = schema['x-kubernetes-validations'] as CelRule[] | undefined;
  for (const rule of own ?? []) rules.push({ ...rule, path });
  const properties = schema.properties as Record<string, TSchema> | undefined;
  for (const [name, child] of Object.entries(properties ?? {}))
    rules.push(...collectCelRules(child, `${path}.${name}`));
  if (schema.items) rules.push(...collectCelRules(schema.items as TSchema, `${path}[*]`));
  if (typeof schema.additionalProperties === 'object') {
    rules.push(...collectCelRules(schema.additionalProperties as TSchema, `${path}[*]`));
  }
  return rules;
}

/** What kinds.ts adds to a kind's registration (kind-registry.ts). */
interface KindDetails
  extends Omit<KindDefinition, keyof KindRegistration | 'version' | 'listKind' | 'categories' | 'celRules'> {}

function define(registration: KindRegistration, details: KindDetails): KindDefinition {
  return {
    ...registration,
    ...details,
    version: kindVersion(registration),
    listKind: `${registration.kind}List`,
    categories: CATEGORIES,
    celRules: [...collectCelRules(details.spec, '.spec'), ...collectCelRules(details.status, '.status')],
  };
}

// A kind in KIND_REGISTRY without an entry here does not type-check.
const DETAILS: Record<KindName, KindDetails> = {
  GitRepository: {
    singular: 'gitrepository',
    shortNames: ['gitrepo'],
    printerColumns: sourceColumns,
    spec: GitRepositorySpec,
    status: GitRepositoryStatus,
    object: GitRepository,
  },
  OCIRepository: {
    singular: 'ocirepository',
    shortNames: ['ocirepo'],
    printerColumns: sourceColumns,
    spec: OCIRepositorySpec,
    status: OCIRepositoryStatus,
    object: OCIRepository,
  },
  HelmRepository: {
    singular: 'helmrepository',
    shortNames: ['helmrepo'],
    printerColumns: sourceColumns,
    spec: HelmRepositorySpec,
    status: HelmRepositoryStatus,
    object: HelmRepository,
  },
  HelmChart: {
    singular: 'helmchart',
    shortNames: ['hc'],
    printerColumns: columns(
      { name: 'Chart', type: 'string', jsonPath: '.spec.chart' },
      { name: 'Version', type: 'string', jsonPath: '.spec.version' },
      { name: 'Source Kind', type: 'string', jsonPath: '.spec.sourceRef.kind', priority: 1 },
      { name: 'Source Name', type: 'string', jsonPath: '.spec.sourceRef.name', priority: 1 },
      { name: 'Revision', type: 'string', jsonPath: '.status.artifact.revision' },
    ),
    spec: HelmChartSpec,
    status: HelmChartStatus,
    object: HelmChart,
  },
  Kustomization: {
    singular: 'kustomization',
    shortNames: ['ks'],
    printerColumns: columns({ name: 'Revision', type: 'string', jsonPath: '.status.lastAppliedRevision' }),
    spec: KustomizationSpec,
    status: KustomizationStatus,
    object: Kustomization,
  },
  KustomizationSet: {
    singular: 'kustomizationset',
    shortNames: ['kss'],
    printerColumns: columns(
      { name: 'Members', type: 'integer', jsonPath: '.status.counts.total' },
      { name: 'Current', type: 'integer', jsonPath: '.status.counts.current' },
      { name: 'Rollout', type: 'string', jsonPath: '.status.rollout.phase' },
    ),
    spec: KustomizationSetSpec,
    status: KustomizationSetStatus,
    object: KustomizationSet,
  },
  HelmRelease: {
    singular: 'helmrelease',
    shortNames: ['hr'],
    printerColumns: columns(
      { name: 'Chart', type: 'string', jsonPath: '.status.history[0].chartName', priority: 1 },
      { name: 'Version', type: 'string', jsonPath: '.status.history[0].chartVersion' },
      { name: 'Release', type: 'integer', jsonPath: '.status.history[0].version', priority: 1 },
    ),
    spec: HelmReleaseSpec,
    status: HelmReleaseStatus,
    object: HelmRelease,
  },
  Provider: {
    singular: 'provider',
    shortNames: [],
    printerColumns: columns({ name: 'Type', type: 'string', jsonPath: '.spec.type' }),
    spec: ProviderSpec,
    status: ProviderStatus,
    object: Provider,
  },
  Alert: {
    singular: 'alert',
    shortNames: [],
    printerColumns: columns({ name: 'Provider', type: 'string', jsonPath: '.spec.providerRef.name' }),
    spec: AlertSpec,
    status: AlertStatus,
    object: Alert,
  },
  Receiver: {
    singular: 'receiver',
    shortNames: [],
    printerColumns: columns(
      { name: 'Type', type: 'string', jsonPath: '.spec.type' },
      { name: 'Path', type: 'string', jsonPath: '.status.webhookPath', priority: 1 },
    ),
    spec: ReceiverSpec,
    status: ReceiverStatus,
    object: Receiver,
  },
  ImageRepository: {
    singular: 'imagerepository',
    shortNames: ['imagerepo'],
    printerColumns: columns(
      { name: 'Image', type: 'string', jsonPath: '.status.canonicalImageName', priority: 1 },
      { name: 'Tags', type: 'integer', jsonPath: '.status.lastScanResult.tagCount' },
      { name: 'Last Scan', type: 'date', jsonPath: '.status.lastScanResult.scanTime' },
    ),
    spec: ImageRepositorySpec,
    status: ImageRepositoryStatus,
    object: ImageRepository,
  },
  ImagePolicy: {
    singular: 'imagepolicy',
    shortNames: ['imagepol'],
    printerColumns: columns(
      { name: 'Image', type: 'string', jsonPath: '.status.latestRef.name' },
      { name: 'Tag', type: 'string', jsonPath: '.status.latestRef.tag' },
      { name: 'Digest', type: 'string', jsonPath: '.status.latestRef.digest', priority: 1 },
    ),
    spec: ImagePolicySpec,
    status: ImagePolicyStatus,
    object: ImagePolicy,
  },
  ImageUpdateAutomation: {
    singular: 'imageupdateautomation',
    shortNames: ['iua'],
    printerColumns: columns(
      { name: 'Last Run', type: 'date', jsonPath: '.status.lastAutomationRunTime' },
      { name: 'Last Push', type: 'string', jsonPath: '.status.lastPushCommit', priority: 1 },
    ),
    spec: ImageUpdateAutomationSpec,
    status: ImageUpdateAutomationStatus,
    object: ImageUpdateAutomation,
  },
};

export type { KindName } from './kind-registry.ts';

/** Every kind Mooring serves, in KIND_REGISTRY's order. */
export const KINDS: readonly KindDefinition[] = KIND_REGISTRY.map((r) => define(r, DETAILS[r.kind]));

/** The definition of `kind`; throws for a kind Mooring does not serve. */
export function kindDefinition(kind: KindName | string): KindDefinition {
  const def = KINDS.find((k) => k.kind === kind);
  if (!def) throw new Error(`unknown kind ${kind}: Mooring serves ${KINDS.map((k) => k.kind).join(', ')}`);
  return def;
}
