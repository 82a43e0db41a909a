import type { TSchema } from '@sinclair/typebox';
import { Alert, AlertSpec, AlertStatus } from './alert.ts';
import { GitRepository, GitRepositorySpec, GitRepositoryStatus } from './git-repository.ts';
import { API_VERSION, IMAGE_GROUP, KUSTOMIZE_GROUP, NOTIFICATION_GROUP, SOURCE_GROUP } from './groups.ts';
import { ImagePolicy, ImagePolicySpec, ImagePolicyStatus } from './image-policy.ts';
import { ImageRepository, ImageRepositorySpec, ImageRepositoryStatus } from './image-repository.ts';
import {
  ImageUpdateAutomation,
  ImageUpdateAutomationSpec,
  ImageUpdateAutomationStatus,
} from './image-update-automation.ts';
import { Kustomization, KustomizationSpec, KustomizationStatus } from './kustomization.ts';
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

/** Everything needed to serve, generate and validate one kind. */
export interface KindDefinition {
  group: string;
  version: string;
  kind: string;
  listKind: string;
  plural: string;
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

interface KindInput extends Omit<KindDefinition, 'version' | 'listKind' | 'categories' | 'celRules'> {}

function define(input: KindInput): KindDefinition {
  return {
    ...input,
    version: API_VERSION,
    listKind: `${input.kind}List`,
    categories: CATEGORIES,
    celRules: [...collectCelRules(input.spec, '.spec'), ...collectCelRules(input.status, '.status')],
  };
}

/** Every kind Mooring serves, in a stable order. */
export const KINDS: readonly KindDefinition[] = [
  define({
    group: SOURCE_GROUP,
    kind: 'GitRepository',
    plural: 'gitrepositories',
    singular: 'gitrepository',
    shortNames: ['gitrepo'],
    printerColumns: sourceColumns,
    spec: GitRepositorySpec,
    status: GitRepositoryStatus,
    object: GitRepository,
  }),
  define({
    group: SOURCE_GROUP,
    kind: 'OCIRepository',
    plural: 'ocirepositories',
    singular: 'ocirepository',
    shortNames: ['ocirepo'],
    printerColumns: sourceColumns,
    spec: OCIRepositorySpec,
    status: OCIRepositoryStatus,
    object: OCIRepository,
  }),
  define({
    group: KUSTOMIZE_GROUP,
    kind: 'Kustomization',
    plural: 'kustomizations',
    singular: 'kustomization',
    shortNames: ['ks'],
    printerColumns: columns({ name: 'Revision', type: 'string', jsonPath: '.status.lastAppliedRevision' }),
    spec: KustomizationSpec,
    status: KustomizationStatus,
    object: Kustomization,
  }),
  define({
    group: NOTIFICATION_GROUP,
    kind: 'Provider',
    plural: 'providers',
    singular: 'provider',
    shortNames: [],
    printerColumns: columns({ name: 'Type', type: 'string', jsonPath: '.spec.type' }),
    spec: ProviderSpec,
    status: ProviderStatus,
    object: Provider,
  }),
  define({
    group: NOTIFICATION_GROUP,
    kind: 'Alert',
    plural: 'alerts',
    singular: 'alert',
    shortNames: [],
    printerColumns: columns({ name: 'Provider', type: 'string', jsonPath: '.spec.providerRef.name' }),
    spec: AlertSpec,
    status: AlertStatus,
    object: Alert,
  }),
  define({
    group: NOTIFICATION_GROUP,
    kind: 'Receiver',
    plural: 'receivers',
    singular: 'receiver',
    shortNames: [],
    printerColumns: columns(
      { name: 'Type', type: 'string', jsonPath: '.spec.type' },
      { name: 'Path', type: 'string', jsonPath: '.status.webhookPath', priority: 1 },
    ),
    spec: ReceiverSpec,
    status: ReceiverStatus,
    object: Receiver,
  }),
  define({
    group: IMAGE_GROUP,
    kind: 'ImageRepository',
    plural: 'imagerepositories',
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
  }),
  define({
    group: IMAGE_GROUP,
    kind: 'ImagePolicy',
    plural: 'imagepolicies',
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
  }),
  define({
    group: IMAGE_GROUP,
    kind: 'ImageUpdateAutomation',
    plural: 'imageupdateautomations',
    singular: 'imageupdateautomation',
    shortNames: ['iua'],
    printerColumns: columns(
      { name: 'Last Run', type: 'date', jsonPath: '.status.lastAutomationRunTime' },
      { name: 'Last Push', type: 'string', jsonPath: '.status.lastPushCommit', priority: 1 },
    ),
    spec: ImageUpdateAutomationSpec,
    status: ImageUpdateAutomationStatus,
    object: ImageUpdateAutomation,
  }),
];

/** Names of Mooring's kinds. */
export type KindName =
  | 'GitRepository'
  | 'OCIRepository'
  | 'Kustomization'
  | 'Provider'
  | 'Alert'
  | 'Receiver'
  | 'ImageRepository'
  | 'ImagePolicy'
  | 'ImageUpdateAutomation';

/** The definition of `kind`; throws for a kind Mooring does not serve. */
export function kindDefinition(kind: KindName | string): KindDefinition {
  const def = KINDS.find((k) => k.kind === kind);
  if (!def) throw new Error(`unknown kind ${kind}: Mooring serves ${KINDS.map((k) => k.kind).join(', ')}`);
  return def;
}
