import {
  FORCE_ANNOTATION,
  FORCE_ENABLED,
  PRUNE_ANNOTATION,
  PRUNE_DISABLED,
  RECONCILE_ANNOTATION,
  RECONCILE_DISABLED,
  SSA_ANNOTATION,
  SSA_POLICIES,
  type SsaPolicy,
} from '@mooring/api';

/** A rendered or live object, as plain JSON. */
export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: {
    name?: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    [key: string]: unknown;
  };
  [key: string]: unknown;
}

/** What the object's own labels and annotations ask of Mooring; annotations win over labels. */
export interface ObjectPolicy {
  ssa: SsaPolicy;
  force: boolean;
  prune: boolean;
  reconcile: boolean;
}

function marker(obj: Manifest, key: string): string | undefined {
  return obj.metadata.annotations?.[key] ?? obj.metadata.labels?.[key];
}

const same = (a: string | undefined, b: string) => a !== undefined && a.toLowerCase() === b.toLowerCase();

/** Reads the `kustomize.mooring.dev/*` markers; an unknown ssa value falls back to Override, as in Flux. */
export function objectPolicy(obj: Manifest): ObjectPolicy {
  const ssaValue = marker(obj, SSA_ANNOTATION);
  const ssa = SSA_POLICIES.find((p) => same(ssaValue, p)) ?? 'Override';
  return {
    ssa,
    force: same(marker(obj, FORCE_ANNOTATION), FORCE_ENABLED),
    prune: !same(marker(obj, PRUNE_ANNOTATION), PRUNE_DISABLED) && ssa !== 'Ignore',
    reconcile: !same(marker(obj, RECONCILE_ANNOTATION), RECONCILE_DISABLED),
  };
}
