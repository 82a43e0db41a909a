// The order one revision is applied in, decided from the rendered objects alone: which are hooks
// (and of which phase), and the waves of the rest. Pure, so it is tested with tables.
import type { Manifest } from '../apply/object-policy.ts';
import { applyStage } from '../apply/stages.ts';
import { HOOK_PHASES, type HookPhase, hookRoleOf } from '../hooks/hook-annotations.ts';
import type { HookDeletePolicy } from '../hooks/hook-runner.ts';
import { groupWaves, type Wave, waveOf } from './apply-waves.ts';

/** A hook of one phase, with the wave that orders it among the phase's hooks. */
export interface PlannedHook {
  phase: HookPhase;
  wave: number;
  object: Manifest;
  policies: HookDeletePolicy[];
}

export interface ApplyOrder {
  /**
   * The regular objects by wave, lowest first. The first wave also holds every CRD, Namespace,
   * ClusterRole and class whatever its wave: applySet puts those in its first stages, before
   * anything that may need them.
   */
  waves: Wave[];
  /** Per phase, its hooks in the order they run: by wave, then name, then kind. */
  hooks: Record<HookPhase, PlannedHook[]>;
  /** Objects Argo CD's `Skip` keeps out of the apply. */
  skipped: Manifest[];
}

/** Some annotation cannot be read; every problem is listed, one per object. */
export class ApplyOrderError extends Error {
  readonly problems: readonly string[];
  constructor(problems: string[]) {
    const shown = problems.slice(0, 5).join('; ');
    const more = problems.length > 5 ? ` and ${problems.length - 5} more` : '';
    super(`invalid hook or wave annotations: ${shown}${more}`);
    this.name = 'ApplyOrderError';
    this.problems = problems;
  }
}

const nameOf = (o: Manifest) =>
  `${o.kind}/${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name ?? ''}`;

function compareHooks(a: PlannedHook, b: PlannedHook): number {
  if (a.wave !== b.wave) return a.wave - b.wave;
  const an = a.object.metadata.name ?? '';
  const bn = b.object.metadata.name ?? '';
  if (an !== bn) return an < bn ? -1 : 1;
  return a.object.kind < b.object.kind ? -1 : a.object.kind > b.object.kind ? 1 : 0;
}

/** Splits a render into hooks and waves; throws ApplyOrderError, naming every bad annotation, before anything is applied. */
export function planApplyOrder(manifests: readonly Manifest[]): ApplyOrder {
  const problems: string[] = [];
  const hooks = Object.fromEntries(HOOK_PHASES.map((p) => [p, [] as PlannedHook[]])) as Record<
    HookPhase,
    PlannedHook[]
  >;
  const regular: { obj: Manifest; wave: number }[] = [];
  const early: Manifest[] = [];
  const skipped: Manifest[] = [];
  for (const obj of manifests) {
    let wave: number;
    let role: ReturnType<typeof hookRoleOf>;
    try {
      wave = waveOf(obj);
      role = hookRoleOf(obj);
    } catch (err) {
      problems.push(`${nameOf(obj)}: ${(err as Error).message}`);
      continue;
    }
    if (role.role === 'skip') skipped.push(obj);
    else if (role.role === 'hook')
      for (const phase of role.phases)
        hooks[phase].push({ phase, wave, object: obj, policies: role.policies });
    else if (applyStage(obj) < 2) early.push(obj);
    else regular.push({ obj, wave });
  }
  if (problems.length) throw new ApplyOrderError(problems);
  for (const phase of HOOK_PHASES) hooks[phase].sort(compareHooks);
  const waves = groupWaves(regular);
  if (early.length) {
    if (waves.length === 0) waves.push({ wave: 0, objects: early });
    else waves[0] = { wave: waves[0]!.wave, objects: [...early, ...waves[0]!.objects] };
  }
  return { waves, hooks, skipped };
}

/** True when the revision has any hook. */
export function hasHooks(order: ApplyOrder): boolean {
  return HOOK_PHASES.some((p) => order.hooks[p].length > 0);
}
