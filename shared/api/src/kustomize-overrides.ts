import { type Static, Type } from '@sinclair/typebox';
import { withDescription } from './schema-kit.ts';

// Kustomize-level building blocks of a Kustomization spec (fluxcd/pkg apis/kustomize).

/** Selects resources; every set field must match (group, version, kind, name, namespace are regexes). */
export const ResourceSelector = Type.Object({
  group: Type.Optional(Type.String({ description: 'API group.' })),
  version: Type.Optional(Type.String({ description: 'API version.' })),
  kind: Type.Optional(Type.String({ description: 'Kind.' })),
  name: Type.Optional(Type.String({ description: 'Name.' })),
  namespace: Type.Optional(Type.String({ description: 'Namespace.' })),
  labelSelector: Type.Optional(Type.String({ description: 'Label selector expression, e.g. app=web.' })),
  annotationSelector: Type.Optional(Type.String({ description: 'Selector expression over annotations.' })),
});
export type ResourceSelector = Static<typeof ResourceSelector>;

/** A strategic-merge or JSON 6902 patch, inline as YAML, and the resources it applies to. */
export const Patch = Type.Object({
  patch: Type.String({ description: 'Strategic merge or JSON 6902 patch as a YAML string.' }),
  target: Type.Optional(withDescription(ResourceSelector, 'Resources the patch applies to.')),
});
export type Patch = Static<typeof Patch>;

/** An image override, as kustomize's `images`. */
export const ImageOverride = Type.Object({
  name: Type.String({ description: 'Image name to match, without tag.' }),
  newName: Type.Optional(Type.String({ description: 'Replacement name.' })),
  newTag: Type.Optional(Type.String({ description: 'Replacement tag.' })),
  digest: Type.Optional(Type.String({ description: 'Replacement digest; newTag is ignored when set.' })),
});
export type ImageOverride = Static<typeof ImageOverride>;

/** CEL health rules for a custom resource kind, evaluated inProgress, then failed, then current. */
export const CustomHealthCheck = Type.Object({
  apiVersion: Type.String({ description: 'API version; only its group is matched.' }),
  kind: Type.Optional(Type.String({ description: 'Kind; every kind of the group when empty.' })),
  current: Type.String({ description: 'CEL expression true when the object is healthy.' }),
  inProgress: Type.Optional(Type.String({ description: 'CEL expression true while it is progressing.' })),
  failed: Type.Optional(Type.String({ description: 'CEL expression true when it has failed.' })),
});
export type CustomHealthCheck = Static<typeof CustomHealthCheck>;

/** Fields whose drift is ignored on selected objects. */
export const DriftIgnoreRule = Type.Object({
  paths: Type.Array(Type.String(), { description: 'JSON pointers (RFC 6901) of the ignored fields.' }),
  target: Type.Optional(withDescription(ResourceSelector, 'Objects the rule applies to; all when empty.')),
});
export type DriftIgnoreRule = Static<typeof DriftIgnoreRule>;
