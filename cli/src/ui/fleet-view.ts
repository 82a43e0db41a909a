import type { FleetMember, KustomizationSetSpec, KustomizationSetStatus, RolloutStep } from '@mooring/api';
import type { KubeObject } from '@mooring/runtime';
import type { Explanation, ObjectLookup } from './why-not-applied.ts';

/** One wave of the rollout as the fleet page shows it. */
export interface FleetStep {
  /** From 1, as status.rollout.step counts. */
  step: number;
  /** The step's selector as `key=value` terms; "every other member" for the implicit last step. */
  selects: string;
  maxUnavailable?: string;
  soakTime?: string;
  state: 'done' | 'in progress' | 'paused' | 'failed' | 'waiting';
}

/** One member (cluster or element) of the fleet. */
export interface FleetMemberRow {
  name: string;
  kind: 'Kustomization' | 'HelmRelease';
  /** The generated object's name, in the set's namespace. */
  objectName: string;
  /** Digest of the spec the set last wrote to it (each member's own, so not comparable to the set's). */
  revision: string;
  /** Whether it holds the set's current template (false while the rollout has not updated it). */
  atTarget: boolean;
  appliedRevision: string;
  releaseVersion?: number;
  ready: string;
  state: string;
  message: string;
  time: string;
  /** Whether the UI's watch holds the generated object (the link then opens its page). */
  exists: boolean;
}

/** The fleet view of a KustomizationSet: its rollout, its members, its counts. */
export interface FleetView {
  targetRevision: string;
  rollout: { step: number; phase: string; message: string; paused: boolean };
  steps: FleetStep[];
  members: FleetMemberRow[];
  counts: { total: number; ready: number; current: number; failed: number; unreachable: number };
}

// Member states that mean it still holds an earlier template (or none the set manages).
const HELD_BACK = new Set(['Outdated', 'Orphaned']);

type SetObject = KubeObject & { spec?: KustomizationSetSpec; status?: KustomizationSetStatus };

const selectorText = (s: RolloutStep['selector']): string => {
  const terms = [
    ...Object.entries(s?.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`),
    ...(s?.matchExpressions ?? []).map(
      (e) => `${e.key} ${e.operator}${e.values?.length ? ` (${e.values.join(', ')})` : ''}`,
    ),
  ];
  return terms.length ? terms.join(', ') : 'every member';
};

function stepState(step: number, rollout: FleetView['rollout']): FleetStep['state'] {
  // Step 0 means done; so is everything before the step in progress.
  if (rollout.phase === 'Complete' || rollout.step === 0 || step < rollout.step) return 'done';
  if (step > rollout.step) return 'waiting';
  if (rollout.phase === 'Failed') return 'failed';
  if (rollout.phase === 'Paused') return 'paused';
  return 'in progress';
}

/** The fleet view of `set`, from its status (which the operator keeps) and the watch cache. */
export function fleetView(set: KubeObject, lookup: ObjectLookup): FleetView {
  const { spec, status } = set as SetObject;
  const namespace = set.metadata.namespace ?? '';
  const targetRevision = status?.revision ?? '';
  const rollout = {
    step: Number(status?.rollout?.step ?? 0),
    phase: status?.rollout?.phase ?? 'Progressing',
    message: status?.rollout?.message ?? '',
    paused: Boolean(spec?.strategy?.rollingUpdate?.paused),
  };
  const declared = spec?.strategy?.rollingUpdate?.steps ?? [];
  const steps: FleetStep[] = declared.map((s, i) => ({
    step: i + 1,
    selects: selectorText(s.selector),
    maxUnavailable: s.maxUnavailable,
    soakTime: s.soakTime,
    state: stepState(i + 1, rollout),
  }));
  // Members matching no step form a last, implicit one (the only one when no steps are declared).
  steps.push({
    step: declared.length + 1,
    selects: declared.length ? 'every other member' : 'every member',
    state: stepState(declared.length + 1, rollout),
  });
  const members = (status?.members ?? []).map((m: FleetMember): FleetMemberRow => {
    const kind = m.kind ?? 'Kustomization';
    return {
      name: m.name,
      kind,
      objectName: m.kustomization,
      revision: m.revision ?? '',
      // Each member's revision digests its own rendered spec; its rollout state says whether that is the target.
      atTarget: !HELD_BACK.has(m.state),
      appliedRevision: m.appliedRevision ?? '',
      releaseVersion: m.releaseVersion === undefined ? undefined : Number(m.releaseVersion),
      ready: m.ready,
      state: m.state,
      message: m.message ?? '',
      time: m.lastTransitionTime ?? m.readySince ?? '',
      exists: Boolean(lookup(kind, namespace, m.kustomization)),
    };
  });
  const c = status?.counts;
  return {
    targetRevision,
    rollout,
    steps,
    members,
    counts: {
      total: Number(c?.total ?? members.length),
      ready: Number(c?.ready ?? members.filter((m) => m.ready === 'True').length),
      current: Number(c?.current ?? 0),
      failed: Number(c?.failed ?? 0),
      unreachable: Number(c?.unreachable ?? 0),
    },
  };
}

const TROUBLE = new Set(['Failed', 'Unreachable']);

/**
 * "Why is this not applied?" for a set that is not Ready: where its rollout stands and which
 * members hold it, naming each with its message, and linking to the first of them. Undefined when
 * nothing is wrong with the fleet itself (the caller then falls back to the object's own condition).
 */
export function fleetWhy(set: KubeObject, fleet: FleetView): Explanation | undefined {
  const id = `KustomizationSet ${set.metadata.namespace ?? ''}/${set.metadata.name ?? ''}`;
  const { rollout } = fleet;
  const troubled = fleet.members.filter((m) => TROUBLE.has(m.state) || m.ready === 'False');
  const blocking = troubled[0] && {
    kind: troubled[0].kind,
    namespace: set.metadata.namespace ?? '',
    name: troubled[0].objectName,
  };
  const named = troubled.map((m) => `${m.name} (${m.state}${m.message ? `: ${m.message}` : ''})`).join('; ');
  const where = rollout.step ? ` at step ${rollout.step} of ${fleet.steps.length}` : '';
  if (rollout.phase === 'Failed')
    return {
      sentence: `${id}: the rollout failed${where}, so the members after it keep their previous revision; ${named || rollout.message}.`,
      blocking,
    };
  if (rollout.phase === 'Paused')
    return {
      sentence: `${id}: the rollout is paused${where}${rollout.paused ? ' (spec.strategy.rollingUpdate.paused)' : ''}: ${rollout.message}${named ? `; not Ready: ${named}` : ''}.`,
      blocking,
    };
  if (troubled.length)
    return {
      sentence: `${id}: ${troubled.length} of ${fleet.counts.total} members are not Ready: ${named}.`,
      blocking,
    };
  return undefined;
}
