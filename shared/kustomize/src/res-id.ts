// Resource identities as kustomize's resid package sees them, shared by the engine and the transformers.
import type { JsonObject, JsonValue, ResId, Resource } from './resource.ts';

/** A group/version/kind selector; an empty or missing part matches anything. */
export interface GvkSelector {
  group?: string;
  version?: string;
  kind?: string;
}

// kyaml v0.21.0's precomputedIsNamespaceScoped (openapi.go), the `false` entries: with the default
// built-in schema kyaml answers from this table alone, so a kind not listed (a CRD's kind, or a
// built-in that arrived after Kubernetes 1.21) counts as namespaced.
// biome-ignore format: a table
const CLUSTER_SCOPED = new Set([
  'admissionregistration.k8s.io/v1 MutatingWebhookConfiguration',
  'admissionregistration.k8s.io/v1 ValidatingWebhookConfiguration',
  'admissionregistration.k8s.io/v1beta1 MutatingWebhookConfiguration',
  'admissionregistration.k8s.io/v1beta1 ValidatingWebhookConfiguration',
  'apiextensions.k8s.io/v1 CustomResourceDefinition',
  'apiextensions.k8s.io/v1beta1 CustomResourceDefinition',
  'apiregistration.k8s.io/v1 APIService',
  'apiregistration.k8s.io/v1beta1 APIService',
  'certificates.k8s.io/v1 CertificateSigningRequest',
  'certificates.k8s.io/v1beta1 CertificateSigningRequest',
  'flowcontrol.apiserver.k8s.io/v1beta1 FlowSchema',
  'flowcontrol.apiserver.k8s.io/v1beta1 PriorityLevelConfiguration',
  'networking.k8s.io/v1 IngressClass',
  'networking.k8s.io/v1beta1 IngressClass',
  'node.k8s.io/v1 RuntimeClass',
  'node.k8s.io/v1beta1 RuntimeClass',
  'policy/v1beta1 PodSecurityPolicy',
  'rbac.authorization.k8s.io/v1 ClusterRole',
  'rbac.authorization.k8s.io/v1 ClusterRoleBinding',
  'rbac.authorization.k8s.io/v1beta1 ClusterRole',
  'rbac.authorization.k8s.io/v1beta1 ClusterRoleBinding',
  'scheduling.k8s.io/v1 PriorityClass',
  'scheduling.k8s.io/v1beta1 PriorityClass',
  'storage.k8s.io/v1 CSIDriver',
  'storage.k8s.io/v1 CSINode',
  'storage.k8s.io/v1 StorageClass',
  'storage.k8s.io/v1 VolumeAttachment',
  'storage.k8s.io/v1beta1 CSIDriver',
  'storage.k8s.io/v1beta1 CSINode',
  'storage.k8s.io/v1beta1 StorageClass',
  'storage.k8s.io/v1beta1 VolumeAttachment',
  'v1 ComponentStatus',
  'v1 Namespace',
  'v1 Node',
  'v1 NodeProxyOptions',
  'v1 PersistentVolume',
]);

// Builds ask this for every id many times over (name references, selectors, appends); a handful of
// distinct GVKs appear per build, so the answers are kept per group/version/kind.
const scopeCache = new Map<string, boolean>();

/** Whether kustomize treats this group/version/kind as cluster-scoped. */
export function isClusterScoped(group: string, version: string, kind: string): boolean {
  const key = `${group === '' ? version : `${group}/${version}`} ${kind}`;
  let scoped = scopeCache.get(key);
  if (scoped === undefined) {
    scoped = CLUSTER_SCOPED.has(key);
    if (scopeCache.size < 10_000) scopeCache.set(key, scoped);
  }
  return scoped;
}

/** Whether the id names a cluster-scoped kind. */
export function idIsClusterScoped(id: Pick<ResId, 'group' | 'version' | 'kind'>): boolean {
  return isClusterScoped(id.group, id.version, id.kind);
}

/** Splits an apiVersion into group and version the way kustomize does (`v1` has no group). */
export function parseApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf('/');
  if (slash < 0) return { group: '', version: apiVersion };
  return { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

/** Reads a string field, treating anything else as ''. */
export function str(value: JsonValue | undefined): string {
  return typeof value === 'string' ? value : '';
}

/** Whether a JSON value is a plain object (not an array, not null). */
export function isObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Returns the value at `key` when it is a plain object. */
export function objectAt(value: JsonValue | undefined, key: string): JsonObject | undefined {
  if (!isObject(value)) return undefined;
  const inner = value[key];
  return isObject(inner) ? inner : undefined;
}

/** The current identity of a manifest. */
export function idOf(object: JsonObject): ResId {
  const { group, version } = parseApiVersion(str(object.apiVersion));
  const metadata = objectAt(object, 'metadata');
  return {
    group,
    version,
    kind: str(object.kind),
    name: str(metadata?.name),
    namespace: str(metadata?.namespace),
  };
}

/** The identity a resource had before any transformer renamed it (kustomize's OrgId). */
export function originalId(resource: Resource): ResId {
  return resource.previousIds[0] ?? idOf(resource.object);
}

/** The resource's identities, oldest first, current last: what kustomize's GetMatchingResourcesByAnyId checks. */
export function allIds(resource: Resource): ResId[] {
  return [...resource.previousIds, idOf(resource.object)];
}

/** Records the resource's current identity as a previous one, before a rename. */
export function storePreviousId(resource: Resource): void {
  resource.previousIds.push(idOf(resource.object));
}

/** Whether an id's group/version/kind is picked by the selector (kustomize's Gvk.IsSelected). */
export function isSelected(
  id: { group: string; version: string; kind: string },
  selector: GvkSelector,
): boolean {
  if (selector.group && selector.group !== id.group) return false;
  if (selector.version && selector.version !== id.version) return false;
  if (selector.kind && selector.kind !== id.kind) return false;
  return true;
}

/** kustomize's EffectiveNamespace: '' means `default`, cluster-scoped kinds have none. */
export function effectiveNamespace(id: ResId): string {
  if (idIsClusterScoped(id)) return '_non_namespaceable_';
  return id.namespace === '' ? 'default' : id.namespace;
}

/** kustomize's ResId.Equals: same group/version/kind and name, and the same effective namespace. */
export function sameId(a: ResId, b: ResId): boolean {
  return (
    a.name === b.name &&
    a.group === b.group &&
    a.version === b.version &&
    a.kind === b.kind &&
    effectiveNamespace(a) === effectiveNamespace(b)
  );
}

/** Renders an id the way kustomize prints it in messages: `Kind.version.group/name.namespace`. */
export function formatId(id: ResId): string {
  return `${id.kind || '[noKind]'}.${id.version || '[noVer]'}.${id.group || '[noGrp]'}/${id.name || '[noName]'}.${id.namespace || '[noNs]'}`;
}
