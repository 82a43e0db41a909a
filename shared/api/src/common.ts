import { type Static, type TProperties, Type } from '@sinclair/typebox';
import { DateTime, Int64, StringEnum, StringMap, withDescription } from './schema-kit.ts';

/** Go duration strings as Flux validates them: `30s`, `1m30s`, `1.5h`, `500ms`. */
export const DURATION_PATTERN = '^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$';

/** Flux validates most operation timeouts without the `h` unit. */
export const TIMEOUT_PATTERN = '^([0-9]+(\\.[0-9]+)?(ms|s|m))+$';

/** A Go duration string (interval, retryInterval, Kustomization timeout). */
export function Duration(description: string, options: { default?: string } = {}) {
  return Type.String({ ...options, description, pattern: DURATION_PATTERN });
}

/** A Go duration string without hours, as Flux's source, image and provider timeouts. */
export function Timeout(description: string, options: { default?: string } = {}) {
  return Type.String({ ...options, description, pattern: TIMEOUT_PATTERN });
}

/** Reference to an object in the same namespace. */
export const LocalObjectReference = Type.Object({
  name: Type.String({ description: 'Name of the referent.' }),
});
export type LocalObjectReference = Static<typeof LocalObjectReference>;

/** Reference to an object in any namespace; no namespace means the referrer's namespace. */
export const NamespacedObjectReference = Type.Object({
  name: Type.String({ description: 'Name of the referent.' }),
  namespace: Type.Optional(
    Type.String({ description: "Namespace of the referent, defaults to the referrer's namespace." }),
  ),
});
export type NamespacedObjectReference = Static<typeof NamespacedObjectReference>;

/** Typed reference to an object in any namespace. */
export const NamespacedObjectKindReference = Type.Object({
  apiVersion: Type.Optional(
    Type.String({ description: 'API version of the referent; the preferred version when empty.' }),
  ),
  kind: Type.String({ description: 'Kind of the referent.' }),
  name: Type.String({ description: 'Name of the referent.' }),
  namespace: Type.Optional(
    Type.String({ description: "Namespace of the referent, defaults to the referrer's namespace." }),
  ),
});
export type NamespacedObjectKindReference = Static<typeof NamespacedObjectKindReference>;

/** Reference to one key of a Secret in the same namespace. */
export const SecretKeyReference = Type.Object({
  name: Type.String({ description: 'Name of the Secret.' }),
  key: Type.Optional(Type.String({ description: 'Key in the Secret; each user documents its default.' })),
});
export type SecretKeyReference = Static<typeof SecretKeyReference>;

/** A Kubernetes label selector (metav1.LabelSelector). */
export const LabelSelector = Type.Object(
  {
    matchLabels: Type.Optional(StringMap({ description: 'Labels that must all match.' })),
    matchExpressions: Type.Optional(
      Type.Array(
        Type.Object({
          key: Type.String({ description: 'Label key the requirement applies to.' }),
          operator: Type.String({ description: 'One of In, NotIn, Exists, DoesNotExist.' }),
          values: Type.Optional(Type.Array(Type.String(), { 'x-kubernetes-list-type': 'atomic' })),
        }),
        { description: 'Label requirements that must all match.', 'x-kubernetes-list-type': 'atomic' },
      ),
    ),
  },
  { 'x-kubernetes-map-type': 'atomic' },
);
export type LabelSelector = Static<typeof LabelSelector>;

/** Namespaces allowed to refer to an object across namespaces (Flux's acl.AccessFrom). */
export const AccessFrom = Type.Object({
  namespaceSelectors: Type.Array(
    Type.Object({
      matchLabels: Type.Optional(StringMap({ description: 'Namespace labels that must all match.' })),
    }),
    { description: 'Namespaces whose labels match any selector are allowed.' },
  ),
});
export type AccessFrom = Static<typeof AccessFrom>;

/** A status condition (metav1.Condition) with the API server's own validation. */
export const Condition = Type.Object({
  type: Type.String({
    description: 'Type of the condition, CamelCase (Ready, Reconciling, Stalled, ...).',
    maxLength: 316,
    pattern:
      '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$',
  }),
  status: StringEnum(['True', 'False', 'Unknown'], { description: 'Status of the condition.' }),
  observedGeneration: Type.Optional(
    Int64({ description: 'Generation the condition was set for.', minimum: 0 }),
  ),
  lastTransitionTime: DateTime({ description: 'Last time the status changed.' }),
  reason: Type.String({
    description: 'CamelCase reason for the last transition.',
    minLength: 1,
    maxLength: 1024,
    pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$',
  }),
  message: Type.String({ description: 'Human-readable detail of the transition.', maxLength: 32768 }),
});
export type Condition = Static<typeof Condition>;

/** A source artifact: a tar.gz addressed by digest and served over HTTP (see ARCHITECTURE.md). */
export const Artifact = Type.Object({
  path: Type.String({ description: 'Path in storage: <kind>/<namespace>/<name>/<file>.' }),
  url: Type.String({ description: 'HTTP address the artifact is served from.' }),
  revision: Type.String({
    description: 'Source revision, e.g. main@sha1:<commit> or <tag>@sha256:<digest>.',
  }),
  digest: Type.Optional(
    Type.String({
      description: 'Digest of the file, <algorithm>:<hex>.',
      pattern: '^[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[a-zA-Z0-9=_-]+$',
    }),
  ),
  lastUpdateTime: DateTime({ description: 'When the artifact was last updated.' }),
  size: Type.Optional(Int64({ description: 'Size of the file in bytes.' })),
  metadata: Type.Optional(StringMap({ description: 'Metadata of the revision, e.g. OCI annotations.' })),
});
export type Artifact = Static<typeof Artifact>;

/** Fields every Mooring status has. */
export const reconcileStatusProperties = {
  observedGeneration: Type.Optional(
    Int64({ description: 'Last generation reconciled (-1 until the first pass).', default: -1 }),
  ),
  conditions: Type.Optional(
    Type.Array(Condition, {
      description: 'kstatus conditions: Ready, Reconciling, Stalled and kind-specific ones.',
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['type'],
    }),
  ),
  lastHandledReconcileAt: Type.Optional(
    Type.String({ description: 'Last handled value of the reconcile.mooring.dev/requestedAt annotation.' }),
  ),
};

/** A status object: the common fields plus `extra`, defaulted so a new object reports generation -1. */
export function ReconcileStatus<T extends TProperties>(extra: T, description: string) {
  return Type.Object(
    { ...reconcileStatusProperties, ...extra },
    { description, default: { observedGeneration: -1 } },
  );
}

/** The common status alone, for kinds with nothing else to report. */
export const BaseStatus = ReconcileStatus({}, 'Observed state.');
export type BaseStatus = Static<typeof BaseStatus>;

/** `schema` documented as a reference to a Secret with the given purpose. */
export function SecretRef(purpose: string) {
  return withDescription(LocalObjectReference, `Secret (same namespace) ${purpose}`);
}
