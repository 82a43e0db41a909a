import { type TSchema, Type } from '@sinclair/typebox';
import { Int64, StringMap } from './schema-kit.ts';

/**
 * The metadata fields operators read. Only for typing and Value.Check: a CRD's own schema may
 * say nothing about metadata beyond `type: object`, so the CRD builder does not emit this.
 */
export const ObjectMeta = Type.Object({
  name: Type.String(),
  namespace: Type.Optional(Type.String()),
  uid: Type.Optional(Type.String()),
  resourceVersion: Type.Optional(Type.String()),
  generation: Type.Optional(Int64()),
  creationTimestamp: Type.Optional(Type.String()),
  deletionTimestamp: Type.Optional(Type.String()),
  labels: Type.Optional(StringMap()),
  annotations: Type.Optional(StringMap()),
  finalizers: Type.Optional(Type.Array(Type.String())),
  ownerReferences: Type.Optional(Type.Array(Type.Unknown())),
  managedFields: Type.Optional(Type.Array(Type.Unknown())),
});

/** The schema of a whole object of one kind: apiVersion, kind, metadata, spec and status. */
export function KubeObject<V extends string, K extends string, S extends TSchema, St extends TSchema>(
  apiVersion: V,
  kind: K,
  spec: S,
  status: St,
) {
  return Type.Object({
    apiVersion: Type.Literal(apiVersion),
    kind: Type.Literal(kind),
    metadata: ObjectMeta,
    spec,
    status: Type.Optional(status),
  });
}
