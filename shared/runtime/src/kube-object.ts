/** Object metadata, as much of it as Mooring reads; unknown fields pass through untouched. */
export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: unknown[];
  managedFields?: unknown[];
  [key: string]: unknown;
}

/** Any Kubernetes object as raw JSON. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  [key: string]: unknown;
}

/**
 * The object without its managedFields, which are most of an object's bytes and which nothing
 * reads from a cache: caches keep objects this way (informers of watched kinds, health waits).
 */
export function withoutManagedFields<T extends KubeObject>(obj: T): T {
  if (!obj.metadata.managedFields) return obj;
  const { managedFields: _dropped, ...metadata } = obj.metadata;
  return { ...obj, metadata };
}

export interface KubeList<T extends KubeObject = KubeObject> {
  apiVersion: string;
  kind: string;
  metadata: { resourceVersion?: string; continue?: string };
  items: T[];
}

/** How to name one object without holding it. */
export interface ObjectKey {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
}

/** `namespace/name`, or `name` for cluster-scoped objects: the work-queue key. */
export function objectKey(obj: { metadata: ObjectMeta }): string {
  const { namespace, name } = obj.metadata;
  return namespace ? `${namespace}/${name}` : `${name}`;
}
