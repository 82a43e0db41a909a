import {
  API_VERSION,
  HELM_GROUP,
  HELM_VERSION,
  IMAGE_GROUP,
  KUSTOMIZE_GROUP,
  NOTIFICATION_GROUP,
  SOURCE_GROUP,
} from './groups.ts';

/**
 * Who reconciles each kind and what the other kinds may do with it: the one list the reference
 * enums (Kustomization, Alert, Receiver, ImageUpdateAutomation), the kustomize operator's source
 * watches, the notification operator's API versions, the CLI's `sources`/`images` groups and the
 * operators' ClusterRole rules (rbac.ts, written into config/operators/ by `npm run gen-crds`)
 * are derived from. It holds no schemas, so the schema modules can import it; kinds.ts adds them.
 */

/** Mooring's operators, each one Deployment (config/operators/<name>.yaml). */
export const OPERATOR_NAMES = ['source', 'kustomize', 'notification', 'image-automation'] as const;
export type OperatorName = (typeof OPERATOR_NAMES)[number];

/** What a kind is to the other kinds. */
export interface KindRoles {
  /** Produces an artifact a Kustomization reads (`spec.sourceRef`): the CLI's `sources`. */
  readonly source?: true;
  /** An Alert can watch it (`spec.eventSources`) and a Receiver trigger it (`spec.resources`). */
  readonly notifiable?: true;
  /** An ImageUpdateAutomation checks it out and pushes to it (`spec.sourceRef`). */
  readonly imageUpdateSource?: true;
}
export type KindRole = keyof KindRoles;

/** A kind's identity and ownership, without its schemas. */
export interface KindRegistration {
  readonly kind: string;
  readonly group: string;
  readonly plural: string;
  /** The version served, when not API_VERSION (HelmRelease keeps Flux's v2). */
  readonly version?: string;
  /** The operator that reconciles it: it alone writes the kind, its status and finalizers. */
  readonly operator: OperatorName;
  readonly roles: KindRoles;
}

/**
 * Every kind Mooring serves, in a stable order (that of KINDS, the CRDs and the CLI's `all`).
 * Flux's Bucket and ExternalArtifact have no Mooring twin. HelmRepository and HelmChart are no
 * `source`: a Kustomization cannot read them (as in Flux); the CLI's `sources` lists them still.
 */
export const KIND_REGISTRY = [
  {
    kind: 'GitRepository',
    group: SOURCE_GROUP,
    plural: 'gitrepositories',
    operator: 'source',
    roles: { source: true, notifiable: true, imageUpdateSource: true },
  },
  {
    kind: 'OCIRepository',
    group: SOURCE_GROUP,
    plural: 'ocirepositories',
    operator: 'source',
    roles: { source: true, notifiable: true },
  },
  {
    kind: 'HelmRepository',
    group: SOURCE_GROUP,
    plural: 'helmrepositories',
    operator: 'source',
    roles: { notifiable: true },
  },
  {
    kind: 'HelmChart',
    group: SOURCE_GROUP,
    plural: 'helmcharts',
    operator: 'source',
    roles: { notifiable: true },
  },
  {
    kind: 'Kustomization',
    group: KUSTOMIZE_GROUP,
    plural: 'kustomizations',
    operator: 'kustomize',
    roles: { notifiable: true },
  },
  {
    kind: 'KustomizationSet',
    group: KUSTOMIZE_GROUP,
    plural: 'kustomizationsets',
    operator: 'kustomize',
    roles: { notifiable: true },
  },
  {
    kind: 'HelmRelease',
    group: HELM_GROUP,
    version: HELM_VERSION,
    plural: 'helmreleases',
    operator: 'kustomize',
    roles: { notifiable: true },
  },
  { kind: 'Provider', group: NOTIFICATION_GROUP, plural: 'providers', operator: 'notification', roles: {} },
  { kind: 'Alert', group: NOTIFICATION_GROUP, plural: 'alerts', operator: 'notification', roles: {} },
  { kind: 'Receiver', group: NOTIFICATION_GROUP, plural: 'receivers', operator: 'notification', roles: {} },
  {
    kind: 'ImageRepository',
    group: IMAGE_GROUP,
    plural: 'imagerepositories',
    operator: 'image-automation',
    roles: { notifiable: true },
  },
  {
    kind: 'ImagePolicy',
    group: IMAGE_GROUP,
    plural: 'imagepolicies',
    operator: 'image-automation',
    roles: { notifiable: true },
  },
  {
    kind: 'ImageUpdateAutomation',
    group: IMAGE_GROUP,
    plural: 'imageupdateautomations',
    operator: 'image-automation',
    roles: { notifiable: true },
  },
] as const satisfies readonly KindRegistration[];

type Registered = (typeof KIND_REGISTRY)[number];

/** Names of Mooring's kinds. */
export type KindName = Registered['kind'];

/** Names of the kinds that have `role`. */
export type KindWithRole<R extends KindRole> = Extract<Registered, { roles: Record<R, true> }>['kind'];

/** The registration of `kind`; throws for a kind Mooring does not serve. */
export function kindRegistration(kind: KindName | string): KindRegistration {
  const found = (KIND_REGISTRY as readonly KindRegistration[]).find((k) => k.kind === kind);
  if (!found)
    throw new Error(`unknown kind ${kind}: Mooring serves ${KIND_REGISTRY.map((k) => k.kind).join(', ')}`);
  return found;
}

/** The kinds that have `role`, in registry order. */
export function kindsWithRole<R extends KindRole>(role: R): readonly KindWithRole<R>[] {
  return (KIND_REGISTRY as readonly KindRegistration[])
    .filter((k) => k.roles[role])
    .map((k) => k.kind as KindWithRole<R>);
}

/** The kinds `operator` reconciles, in registry order. */
export function kindsOfOperator(operator: OperatorName): readonly KindName[] {
  return KIND_REGISTRY.filter((k) => k.operator === operator).map((k) => k.kind);
}

/** The version a kind is served at. */
export function kindVersion(registration: KindRegistration): string {
  return registration.version ?? API_VERSION;
}

/** `<group>/<version>` of a kind, as its objects' apiVersion holds it. */
export function kindApiVersion(kind: KindName): string {
  const registration = kindRegistration(kind);
  return `${registration.group}/${kindVersion(registration)}`;
}

/** Source kinds a Kustomization can read. */
export const SOURCE_KINDS = kindsWithRole('source');

/** Kinds an Alert can watch and a Receiver can trigger: the kinds Mooring reconciles and reports on. */
export const NOTIFIABLE_KINDS = kindsWithRole('notifiable');

/** Kinds an ImageUpdateAutomation can push to: Git is the only one. */
export const IMAGE_UPDATE_SOURCE_KINDS = kindsWithRole('imageUpdateSource');
