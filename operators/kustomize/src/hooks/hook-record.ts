// What status.hooks says about this run's hooks: whether a phase is still to run, already done, or
// failed for this revision. Pure, so a re-reconcile and a restart decide alike.
import type { HookRunStatus } from '@mooring/api';
import type { HookPhase } from './hook-annotations.ts';

/** The run a record is for: the source revision and render digest, and the requestedAt it ran under. */
export interface HookRunKey {
  revision: string;
  digest: string;
  requestedAt: string | undefined;
}

export const PHASE_FIELD = {
  'pre-apply': 'preApply',
  'post-apply': 'postApply',
  'on-failure': 'onFailure',
} as const satisfies Record<HookPhase, keyof HookRunStatus>;

export function isSameRun(record: HookRunStatus | undefined, key: HookRunKey): boolean {
  return record !== undefined && record.revision === key.revision && record.digest === key.digest;
}

/** The record this run builds on: the stored one for the same revision and render, else a fresh one. */
export function recordFor(stored: HookRunStatus | undefined, key: HookRunKey): HookRunStatus {
  if (stored && isSameRun(stored, key)) return structuredClone(stored);
  return { revision: key.revision, digest: key.digest };
}

export type PhaseDecision = { run: true } | { run: false; failed?: string };

/**
 * Whether a phase runs now: not when it succeeded for this run; not when it failed for it, unless
 * a new `reconcile.mooring.dev/requestedAt` asks (then the recorded failure is the answer again).
 */
export function phaseDecision(
  record: HookRunStatus,
  phase: HookPhase,
  requestedAt: string | undefined,
): PhaseDecision {
  const result = record[PHASE_FIELD[phase]];
  if (!result) return { run: true };
  if (result.result === 'Succeeded') return { run: false };
  if (requestedAt !== undefined && requestedAt !== record.requestedAt) return { run: true };
  return { run: false, failed: result.message ?? `${phase} hooks failed` };
}
