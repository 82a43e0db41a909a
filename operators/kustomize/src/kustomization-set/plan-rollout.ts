import type { FleetMember, RolloutStep, SetMemberKind } from '@mooring/api';
import { parseDuration } from '@mooring/runtime';
import { matchesLabelSelector } from './generators.ts';

/** What the plan knows of one generated object (Kustomization or HelmRelease) on the API server. */
export interface LiveState {
  revision: string | undefined;
  generation: number;
  /** The Ready condition, if it speaks of the current generation. */
  ready: { status: 'True' | 'False' | 'Unknown'; message: string } | undefined;
  appliedRevision?: string;
  /** A HelmRelease's latest Helm release version. */
  releaseVersion?: number;
}

/** One element as the planner sees it. */
export interface PlanMember {
  name: string;
  /** Name of the generated object, whatever its kind. */
  kustomization: string;
  /** Its kind, when not a Kustomization. */
  kind?: SetMemberKind;
  labels: Record<string, string>;
  desiredRevision: string;
  live: LiveState | undefined;
  /** Its cluster did not answer: it is skipped and never holds the others back. */
  unreachable?: string;
  /**
   * Delivery mode git: why its agent's object cannot be read (no kubeconfig, or its cluster does
   * not answer). Once its file holds the desired revision it counts as committed, and holds no
   * wave back: nothing could ever say it is Ready.
   */
  unobserved?: string;
  /** What the last status said of it, for the soak clock. */
  previous?: FleetMember;
}

export interface RolloutPlan {
  /** Generated objects to write the desired spec to now (new ones and this step's updates). */
  write: string[];
  members: FleetMember[];
  rollout: { step: number; phase: 'Progressing' | 'Paused' | 'Failed' | 'Complete'; message: string };
  /** When to look again for a soak to end. */
  requeueAfterMs?: number;
}

type Health = 'healthy' | 'failed' | 'updating' | 'outdated' | 'new' | 'committed';

function healthOf(m: PlanMember): Health {
  if (!m.live) return 'new';
  if (m.live.revision !== m.desiredRevision) return 'outdated';
  if (m.unobserved) return 'committed';
  if (m.live.ready?.status === 'True') return 'healthy';
  if (m.live.ready?.status === 'False') return 'failed';
  return 'updating';
}

/** `maxUnavailable` of a step of `size` members: a count or a percent (rounded down, at least 1). */
export function maxUnavailableOf(value: string | undefined, size: number): number {
  if (value === undefined) return Math.max(1, size);
  const n = value.endsWith('%') ? Math.floor((size * Number(value.slice(0, -1))) / 100) : Number(value);
  return Math.max(1, n);
}

/**
 * Decides what a reconcile writes: every new element at once, then outdated ones step by step. A
 * step begins only when every reachable member of the steps before it holds the new revision and
 * has been Ready for their soak time; within a step at most maxUnavailable are updating at once. A
 * member Ready=False at the new revision stops the rollout there: the later steps keep what they
 * have. Without steps, the whole fleet is one step with no limit.
 */
export function planRollout(
  members: readonly PlanMember[],
  steps: readonly RolloutStep[] | undefined,
  paused: boolean,
  now: Date,
): RolloutPlan {
  const iso = now.toISOString();
  const health = new Map(members.map((m) => [m.kustomization, healthOf(m)]));
  const write = members.filter((m) => !m.live && !m.unreachable).map((m) => m.kustomization);
  const waves: { step: RolloutStep; members: PlanMember[] }[] = (steps ?? []).map((step) => ({
    step,
    members: [],
  }));
  const rest: PlanMember[] = [];
  for (const m of members) {
    const wave = waves.find((w) => matchesLabelSelector(w.step.selector, m.labels));
    (wave ? wave.members : rest).push(m);
  }
  if (rest.length || waves.length === 0) waves.push({ step: {}, members: rest });

  let rollout: RolloutPlan['rollout'] = {
    step: 0,
    phase: 'Complete',
    message: 'every member holds the current revision',
  };
  let requeueAfterMs: number | undefined;
  const readySince = (m: PlanMember) =>
    m.previous?.revision === m.desiredRevision && m.previous.readySince ? m.previous.readySince : iso;

  for (const [i, wave] of waves.entries()) {
    const reachable = wave.members.filter((m) => !m.unreachable);
    const of = (h: Health) => reachable.filter((m) => health.get(m.kustomization) === h);
    const failed = of('failed');
    if (failed.length) {
      rollout = {
        step: i + 1,
        phase: 'Failed',
        message: `step ${i + 1} failed: ${failed.map((m) => `${m.name}: ${m.live?.ready?.message ?? 'not Ready'}`).join('; ')}`,
      };
      break;
    }
    const outdated = of('outdated');
    const updating = [...of('updating'), ...of('new')];
    if (outdated.length) {
      if (paused) {
        rollout = {
          step: i + 1,
          phase: 'Paused',
          message: `paused before updating ${outdated.length} member(s) of step ${i + 1}`,
        };
        break;
      }
      const budget = maxUnavailableOf(wave.step.maxUnavailable, reachable.length) - updating.length;
      const next = [...outdated].sort((a, b) => a.name.localeCompare(b.name)).slice(0, Math.max(0, budget));
      for (const m of next) {
        write.push(m.kustomization);
        health.set(m.kustomization, 'updating');
      }
      rollout = {
        step: i + 1,
        phase: 'Progressing',
        message: `step ${i + 1}: updating ${next.length + updating.length} of ${reachable.length}`,
      };
      break;
    }
    if (updating.length) {
      rollout = {
        step: i + 1,
        phase: 'Progressing',
        message: `step ${i + 1}: waiting for ${updating.map((m) => m.name).join(', ')} to be Ready`,
      };
      break;
    }
    const soakMs = wave.step.soakTime ? parseDuration(wave.step.soakTime) : 0;
    const observed = reachable.filter((m) => health.get(m.kustomization) !== 'committed');
    const lastReady = Math.max(0, ...observed.map((m) => Date.parse(readySince(m))));
    const left = lastReady + soakMs - now.getTime();
    if (i < waves.length - 1 && left > 0) {
      rollout = {
        step: i + 1,
        phase: 'Progressing',
        message: `step ${i + 1}: Ready, soaking ${Math.ceil(left / 1000)}s more`,
      };
      requeueAfterMs = left;
      break;
    }
  }

  const memberStatus = (m: PlanMember): FleetMember => {
    const h = health.get(m.kustomization)!;
    const state: FleetMember['state'] = m.unreachable
      ? 'Unreachable'
      : h === 'healthy'
        ? 'Current'
        : h === 'committed'
          ? 'Committed'
          : h === 'failed'
            ? 'Failed'
            : h === 'outdated'
              ? 'Outdated'
              : 'Updating';
    const ready = m.live?.ready?.status ?? 'Unknown';
    const out: FleetMember = {
      name: m.name,
      kustomization: m.kustomization,
      ...(m.kind && m.kind !== 'Kustomization' ? { kind: m.kind } : {}),
      ready,
      state,
      ...(m.live?.revision ? { revision: m.live.revision } : {}),
      ...(m.live?.appliedRevision ? { appliedRevision: m.live.appliedRevision } : {}),
      ...(m.live?.releaseVersion !== undefined ? { releaseVersion: m.live.releaseVersion } : {}),
    };
    const message = m.unreachable ?? m.unobserved ?? m.live?.ready?.message;
    if (message) out.message = message;
    if (h === 'healthy' && !m.unreachable) out.readySince = readySince(m);
    out.lastTransitionTime =
      m.previous && m.previous.state === state ? (m.previous.lastTransitionTime ?? iso) : iso;
    return out;
  };
  return {
    write,
    members: members.map(memberStatus),
    rollout,
    ...(requeueAfterMs !== undefined ? { requeueAfterMs } : {}),
  };
}
