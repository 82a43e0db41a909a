import { KustomizeError } from '../errors.ts';
import { formatId, idOf, isObject, parseApiVersion, str } from '../res-id.ts';
import type { JsonObject, JsonValue } from '../resource.ts';

/** kustomize's FieldSpec: a slash path (with `[]` list hints and `\/` escapes) limited to a GVK. */
export interface FieldSpec {
  path: string;
  group?: string;
  version?: string;
  kind?: string;
  /** kustomize's `create`: make missing maps (and the leaf) along the path. */
  create?: boolean;
}

/** A spot in a manifest the walker found: read it, or overwrite it in place. */
export interface FieldRef {
  readonly value: JsonValue;
  set(value: JsonValue): void;
}

// The tables below are kustomize v5.8.0's api/konfig/builtinpluginconsts, as data.

const apps = (kind: string, path: string, create: boolean): FieldSpec => ({
  path,
  group: 'apps',
  kind,
  create,
});

/** commonLabels (and `labels` with includeSelectors): metadata, selectors and pod templates. */
export const COMMON_LABELS_FIELD_SPECS: FieldSpec[] = [
  { path: 'metadata/labels', create: true },
  { path: 'spec/selector', version: 'v1', kind: 'Service', create: true },
  { path: 'spec/selector', version: 'v1', kind: 'ReplicationController', create: true },
  { path: 'spec/template/metadata/labels', version: 'v1', kind: 'ReplicationController', create: true },
  { path: 'spec/selector/matchLabels', kind: 'Deployment', create: true },
  { path: 'spec/template/metadata/labels', kind: 'Deployment', create: true },
  ...affinityAndSpread('Deployment'),
  { path: 'spec/selector/matchLabels', kind: 'ReplicaSet', create: true },
  { path: 'spec/template/metadata/labels', kind: 'ReplicaSet', create: true },
  { path: 'spec/selector/matchLabels', kind: 'DaemonSet', create: true },
  { path: 'spec/template/metadata/labels', kind: 'DaemonSet', create: true },
  apps('StatefulSet', 'spec/selector/matchLabels', true),
  apps('StatefulSet', 'spec/template/metadata/labels', true),
  ...affinityAndSpread('StatefulSet'),
  apps('StatefulSet', 'spec/volumeClaimTemplates[]/metadata/labels', true),
  { path: 'spec/selector/matchLabels', group: 'batch', kind: 'Job', create: false },
  { path: 'spec/template/metadata/labels', group: 'batch', kind: 'Job', create: true },
  { path: 'spec/jobTemplate/spec/selector/matchLabels', group: 'batch', kind: 'CronJob', create: false },
  { path: 'spec/jobTemplate/metadata/labels', group: 'batch', kind: 'CronJob', create: true },
  { path: 'spec/jobTemplate/spec/template/metadata/labels', group: 'batch', kind: 'CronJob', create: true },
  { path: 'spec/selector/matchLabels', group: 'policy', kind: 'PodDisruptionBudget', create: false },
  { path: 'spec/podSelector/matchLabels', group: 'networking.k8s.io', kind: 'NetworkPolicy', create: false },
  {
    path: 'spec/ingress/from/podSelector/matchLabels',
    group: 'networking.k8s.io',
    kind: 'NetworkPolicy',
    create: false,
  },
  {
    path: 'spec/egress/to/podSelector/matchLabels',
    group: 'networking.k8s.io',
    kind: 'NetworkPolicy',
    create: false,
  },
];

function affinityAndSpread(kind: string): FieldSpec[] {
  const base = 'spec/template/spec/affinity';
  return [
    apps(
      kind,
      `${base}/podAffinity/preferredDuringSchedulingIgnoredDuringExecution/podAffinityTerm/labelSelector/matchLabels`,
      false,
    ),
    apps(
      kind,
      `${base}/podAffinity/requiredDuringSchedulingIgnoredDuringExecution/labelSelector/matchLabels`,
      false,
    ),
    apps(
      kind,
      `${base}/podAntiAffinity/preferredDuringSchedulingIgnoredDuringExecution/podAffinityTerm/labelSelector/matchLabels`,
      false,
    ),
    apps(
      kind,
      `${base}/podAntiAffinity/requiredDuringSchedulingIgnoredDuringExecution/labelSelector/matchLabels`,
      false,
    ),
    apps(kind, 'spec/template/spec/topologySpreadConstraints/labelSelector/matchLabels', false),
  ];
}

/** `labels` with includeTemplates: metadata plus pod-template metadata, never selectors. */
export const TEMPLATE_LABELS_FIELD_SPECS: FieldSpec[] = [
  { path: 'metadata/labels', create: true },
  { path: 'spec/template/metadata/labels', version: 'v1', kind: 'ReplicationController', create: true },
  { path: 'spec/template/metadata/labels', kind: 'Deployment', create: true },
  { path: 'spec/template/metadata/labels', kind: 'ReplicaSet', create: true },
  { path: 'spec/template/metadata/labels', kind: 'DaemonSet', create: true },
  apps('StatefulSet', 'spec/template/metadata/labels', true),
  apps('StatefulSet', 'spec/volumeClaimTemplates[]/metadata/labels', true),
  { path: 'spec/template/metadata/labels', group: 'batch', kind: 'Job', create: true },
  { path: 'spec/jobTemplate/metadata/labels', group: 'batch', kind: 'CronJob', create: true },
  { path: 'spec/jobTemplate/spec/template/metadata/labels', group: 'batch', kind: 'CronJob', create: true },
];

/** commonAnnotations: metadata and pod templates. */
export const COMMON_ANNOTATIONS_FIELD_SPECS: FieldSpec[] = [
  { path: 'metadata/annotations', create: true },
  { path: 'spec/template/metadata/annotations', version: 'v1', kind: 'ReplicationController', create: true },
  { path: 'spec/template/metadata/annotations', kind: 'Deployment', create: true },
  { path: 'spec/template/metadata/annotations', kind: 'ReplicaSet', create: true },
  { path: 'spec/template/metadata/annotations', kind: 'DaemonSet', create: true },
  { path: 'spec/template/metadata/annotations', kind: 'StatefulSet', create: true },
  { path: 'spec/template/metadata/annotations', group: 'batch', kind: 'Job', create: true },
  { path: 'spec/jobTemplate/metadata/annotations', group: 'batch', kind: 'CronJob', create: true },
  {
    path: 'spec/jobTemplate/spec/template/metadata/annotations',
    group: 'batch',
    kind: 'CronJob',
    create: true,
  },
];

/** namePrefix and nameSuffix touch only the resource's own name. */
export const NAME_PREFIX_SUFFIX_FIELD_SPECS: FieldSpec[] = [{ path: 'metadata/name' }];

/** namespace: metadata, a Namespace's own name, binding subjects, APIService and CRD webhook services. */
export const NAMESPACE_FIELD_SPECS: FieldSpec[] = [
  { path: 'metadata/namespace', create: true },
  { path: 'metadata/name', kind: 'Namespace', create: true },
  { path: 'subjects', kind: 'RoleBinding' },
  { path: 'subjects', kind: 'ClusterRoleBinding' },
  { path: 'spec/service/namespace', group: 'apiregistration.k8s.io', kind: 'APIService', create: true },
  {
    path: 'spec/conversion/webhook/clientConfig/service/namespace',
    group: 'apiextensions.k8s.io',
    kind: 'CustomResourceDefinition',
  },
];

/** images: container images of pods and pod templates, and image volumes. */
export const IMAGES_FIELD_SPECS: FieldSpec[] = [
  { path: 'spec/containers[]/image', create: true },
  { path: 'spec/initContainers[]/image', create: true },
  { path: 'spec/volumes[]/image/reference', create: true },
  { path: 'spec/template/spec/containers[]/image', create: true },
  { path: 'spec/template/spec/initContainers[]/image', create: true },
  { path: 'spec/template/spec/volumes[]/image/reference', create: true },
];

/** replicas: the workload kinds whose `spec/replicas` may be set. */
export const REPLICAS_FIELD_SPECS: FieldSpec[] = [
  { path: 'spec/replicas', kind: 'Deployment', create: true },
  { path: 'spec/replicas', kind: 'StatefulSet', create: true },
  { path: 'spec/replicas', kind: 'ReplicaSet', create: true },
  { path: 'spec/replicas', kind: 'ReplicationController', create: true },
];

const splitCache = new Map<string, string[]>();

/** Splits a kustomize field path on '/', keeping `\\/` as a literal slash inside a segment. */
export function splitFieldPath(path: string): string[] {
  const cached = splitCache.get(path);
  if (cached) return cached;
  const parts = path.split('/');
  const out: string[] = [parts[0] ?? ''];
  for (const part of parts.slice(1)) {
    const last = out.length - 1;
    const prev = out[last] ?? '';
    if (prev.endsWith('\\')) out[last] = `${prev.slice(0, -1)}/${part}`;
    else out.push(part);
  }
  // Field specs come from a few fixed tables and kustomization files, so the cache stays small.
  if (splitCache.size < 10_000) splitCache.set(path, out);
  return out;
}

/** Whether the field spec's group/version/kind applies to the manifest. */
export function fieldSpecMatches(spec: FieldSpec, object: JsonObject): boolean {
  if (spec.kind && spec.kind !== str(object.kind)) return false;
  const { group, version } = parseApiVersion(str(object.apiVersion));
  if (spec.group && spec.group !== group) return false;
  if (spec.version && spec.version !== version) return false;
  return true;
}

/** What to create at the leaf when a spec says `create: true`; without it nothing is created. */
export type CreateKind = 'map' | 'scalar';

/**
 * Calls `visit` on every node the field spec's path reaches in the manifest, descending into every
 * element of a list met on the way. With `create` (and a spec saying `create: true`) missing maps
 * along the path and the leaf are made first, as kustomize's fieldspec filter does.
 */
export function walkFieldSpec(
  object: JsonObject,
  spec: FieldSpec,
  visit: (ref: FieldRef) => void,
  create?: CreateKind,
): void {
  if (!fieldSpecMatches(spec, object)) return;
  const path = splitFieldPath(spec.path);
  try {
    walk(object, path, 0, spec.create === true ? create : undefined, visit);
  } catch (error) {
    if (error instanceof KustomizeError && !error.message.startsWith('considering field')) {
      throw new KustomizeError(
        `considering field '${spec.path}' of object ${formatId(idOf(object))}: ${error.message}`,
      );
    }
    throw error;
  }
}

// Holder and key rather than a reference object per step: the walk runs for every field spec of
// every resource, and only the leaves need something the visitor can write through.
type Holder = JsonObject | JsonValue[];

function walk(
  value: JsonValue,
  path: string[],
  index: number,
  create: CreateKind | undefined,
  visit: (ref: FieldRef) => void,
): void {
  if (value === null || value === undefined) return;
  if (Array.isArray(value)) {
    // A list keeps the same path position: kustomize paths need not mark lists with `[]`.
    for (let i = 0; i < value.length; i++) step(value, i, path, index, create, visit);
    return;
  }
  if (!isObject(value)) throw new KustomizeError('expected sequence or mapping node');
  const segment = path[index] ?? '';
  const isSeq = segment.endsWith('[]');
  const name = isSeq ? segment.slice(0, -2) : segment;
  if (name === '') throw new KustomizeError('cannot set or create an empty field name');
  const isLeaf = index === path.length - 1;
  let kind: 'map' | 'scalar' | 'seq' | undefined;
  if (create === undefined || isSeq) {
    if (!Object.hasOwn(value, name)) return;
    if (isSeq) kind = 'seq';
  } else {
    kind = isLeaf ? create : 'map';
    if (!Object.hasOwn(value, name)) value[name] = kind === 'map' ? {} : '';
  }
  // A present-but-null field takes the kind it is about to be used as, like kustomize does.
  if (value[name] === null && kind !== undefined)
    value[name] = kind === 'map' ? {} : kind === 'seq' ? [] : '';
  step(value, name, path, index + 1, create, visit);
}

function step(
  holder: Holder,
  key: string | number,
  path: string[],
  index: number,
  create: CreateKind | undefined,
  visit: (ref: FieldRef) => void,
): void {
  const value = (holder as Record<string | number, JsonValue>)[key] ?? null;
  if (index < path.length) {
    walk(value, path, index, create, visit);
    return;
  }
  visit({
    value,
    set(next: JsonValue) {
      (holder as Record<string | number, JsonValue>)[key] = next;
    },
  });
}
