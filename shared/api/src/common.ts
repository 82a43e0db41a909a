import { type Static, type TProperties, Type } from '@sinclair/typebox';
import { type CelRule, cel, DateTime, Int64, StringEnum, StringMap, withDescription } from './schema-kit.ts';

/** Go duration strings as Flux validates them: `30s`, `1m30s`, `1.5h`, `500ms`. */
export const DURATION_PATTERN = '^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$';

/** Flux validates most operation timeouts without the `h` unit. */
export const TIMEOUT_PATTERN = '^([0-9]+(\\.[0-9]+)?(ms|s|m))+$';

/**
 * Longest duration string accepted. Real ones are short (`1h30m15s500ms` is 13); the bound keeps
 * the CEL rule cheap and, with `OVERSIZED_TERM`, keeps every string the rule parses below the
 * int64 nanoseconds CEL's `duration()` overflows at (about 2,562,047h).
 */
export const DURATION_MAX_LENGTH = 20;

/**
 * A term that is out of bounds on its own: an integer part of 7 digits or more in h, m or s
 * (1,000,000s is 277h), or of 10 or more in ms (1,000,000,000ms is 277h). Matched before
 * `duration()` is called, so a value like `10000000h` gets the bounds message instead of CEL's
 * conversion error. Within `DURATION_MAX_LENGTH`, strings without such a term sum to at most about
 * 2,100,000h, which `duration()` parses. Units are followed by a digit or the end, so `m([0-9]|$)`
 * is minutes and never the m of ms.
 */
const OVERSIZED_TERM = '(^|[hms])([0-9]{7,}(\\.[0-9]+)?(h|s|m([0-9]|$))|[0-9]{10,}(\\.[0-9]+)?ms)';

/** The range a duration field admits, as Go duration strings and in milliseconds. */
export interface DurationBounds {
  min: string;
  max: string;
  minMs: number;
  maxMs: number;
}

/**
 * Intervals (interval, retryInterval): at least 1s, since `0s` requeued an object in a hot loop
 * (CVE-2022-39272 in Flux), and at most 168h (a week): far above the minutes to hours GitOps
 * manifests use, yet below the 2^31-1 ms (about 596h) one Node timer takes, so an interval, and a
 * timeout that defaults to one, never overflows a timer. The work queue clamps to the same range.
 */
export const INTERVAL_BOUNDS: DurationBounds = {
  min: '1s',
  max: '168h',
  minMs: 1_000,
  maxMs: 168 * 3_600_000,
};

/**
 * Timeouts of one operation (a fetch, a scan, an apply and its health checks, a send): at least
 * 1s, since `0s` aborts every attempt at once, and at most 24h; `1440m` in fields without `h`.
 */
export const TIMEOUT_BOUNDS: DurationBounds = { min: '1s', max: '24h', minMs: 1_000, maxMs: 24 * 3_600_000 };

/**
 * The CEL rule refusing durations outside `bounds`, with a message naming `field`; without `hours`
 * the field takes `TIMEOUT_PATTERN` and the message gives the maximum in minutes. A value that
 * does not match the pattern passes the rule, so the API server reports only the mismatch.
 */
export function durationRule(field: string, bounds: DurationBounds, hours = true): CelRule {
  const pattern = hours ? DURATION_PATTERN : TIMEOUT_PATTERN;
  const max = hours ? bounds.max : `${bounds.maxMs / 60_000}m`;
  return {
    rule:
      `!self.matches(r'${pattern}') || (!self.matches(r'${OVERSIZED_TERM}')` +
      ` && duration(self) >= duration('${bounds.min}') && duration(self) <= duration('${bounds.max}'))`,
    message: `${field} must be at least ${bounds.min} and at most ${max}`,
  };
}

interface DurationOptions {
  default?: string;
  /** The field's name in the refusal message. */
  field?: string;
}

/** A Go duration string between `INTERVAL_BOUNDS` (interval, retryInterval). */
export function Interval(description: string, options: DurationOptions = {}) {
  const { field = 'interval', ...rest } = options;
  return Type.String({
    ...rest,
    description,
    pattern: DURATION_PATTERN,
    maxLength: DURATION_MAX_LENGTH,
    ...cel(durationRule(field, INTERVAL_BOUNDS)),
  });
}

/**
 * A Go duration string between `TIMEOUT_BOUNDS`; without the `h` unit, as Flux's source, image
 * and provider timeouts, unless `hours` (the Kustomization timeout).
 */
export function Timeout(description: string, options: DurationOptions & { hours?: boolean } = {}) {
  const { field = 'timeout', hours = false, ...rest } = options;
  return Type.String({
    ...rest,
    description,
    pattern: hours ? DURATION_PATTERN : TIMEOUT_PATTERN,
    maxLength: DURATION_MAX_LENGTH,
    ...cel(durationRule(field, TIMEOUT_BOUNDS, hours)),
  });
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
