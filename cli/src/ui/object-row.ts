import type { KindDefinition } from '@mooring/api';
import type { KubeObject } from '@mooring/runtime';
import { readyCondition, revisionOf } from '../object-status.ts';

/** What the overview shows of an object: the `mooring get` columns plus a state to sort and filter by. */
export interface ObjectRow {
  kind: string;
  namespace: string;
  name: string;
  state: ObjectState;
  reason: string;
  message: string;
  revision: string;
  suspended: boolean;
  /** A KustomizationSet's members: how many there are and how many are Ready. */
  members?: { total: number; ready: number };
}

/** Failing first, then still working, then suspended, then fine: the order the overview sorts by. */
export const STATES = ['failed', 'progressing', 'suspended', 'ready'] as const;
export type ObjectState = (typeof STATES)[number];

/** The state a user reads off the Ready condition; an object never reconciled counts as progressing. */
export function stateOf(obj: KubeObject): ObjectState {
  if ((obj.spec as { suspend?: boolean } | undefined)?.suspend) return 'suspended';
  const ready = readyCondition(obj);
  if (ready?.status === 'True') return 'ready';
  if (ready?.status === 'False') return 'failed';
  return 'progressing';
}

/** The overview row of `obj`, a `def` object. */
export function rowOf(def: KindDefinition, obj: KubeObject): ObjectRow {
  const ready = readyCondition(obj);
  const fleet = def.kind === 'KustomizationSet' ? fleetOf(obj) : undefined;
  return {
    kind: def.kind,
    namespace: obj.metadata.namespace ?? '',
    name: obj.metadata.name ?? '',
    state: stateOf(obj),
    reason: ready?.reason ?? '',
    message: (ready?.message ?? '').replace(/\s+/g, ' '),
    revision: fleet?.revision ?? revisionOf(obj),
    suspended: Boolean((obj.spec as { suspend?: boolean } | undefined)?.suspend),
    ...(fleet && { members: fleet.members }),
  };
}

// A set has no applied revision of its own: the template revision it rolls out, and its counts.
function fleetOf(obj: KubeObject): { revision: string; members: { total: number; ready: number } } {
  const status = obj.status as
    | { revision?: string; counts?: { total?: number; ready?: number }; members?: unknown[] }
    | undefined;
  return {
    revision: status?.revision ?? '',
    members: {
      total: Number(status?.counts?.total ?? status?.members?.length ?? 0),
      ready: Number(status?.counts?.ready ?? 0),
    },
  };
}
