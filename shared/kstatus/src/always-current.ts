import { current, type StatusResult } from './result.ts';

/** Kinds that have nothing to wait for once they exist (cli-utils' alwaysReady and pdbConditions). */
export const ALWAYS_CURRENT_KINDS: readonly string[] = [
  'ConfigMap',
  'Secret',
  'batch/CronJob',
  'policy/PodDisruptionBudget',
];

/** kstatus for the always-current kinds. */
export function alwaysCurrent(): StatusResult {
  return current('Resource is always ready');
}
