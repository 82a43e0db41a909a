import type { OperatorDefinition } from '@mooring/runtime';

/**
 * Every operator the all-in-one process can run, by name. Each loads lazily so `--only` pays
 * only for what it starts. Operators add themselves here as they land.
 */
export const OPERATORS: Record<string, () => Promise<OperatorDefinition>> = {
  source: async () => (await import('@mooring/source-operator')).sourceOperator(),
  kustomize: async () => (await import('@mooring/kustomize-operator')).kustomizeOperator(),
  notification: async () => (await import('@mooring/notification-operator')).notificationOperator(),
  'image-automation': async () =>
    (await import('@mooring/image-automation-operator')).imageAutomationOperator(),
};

/** The operators `--only` names (all of them when unset); unknown names are an error. */
export function selectOperators(
  only: string | undefined,
  known: readonly string[] = Object.keys(OPERATORS),
): string[] {
  if (known.length === 0) {
    throw new Error('no operator is registered yet in operators/all-in-one/src/registry.ts');
  }
  if (!only) return [...known];
  const wanted = only
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = wanted.filter((w) => !known.includes(w));
  if (unknown.length)
    throw new Error(`unknown operator ${unknown.join(', ')}: choose from ${known.join(', ')}`);
  return wanted;
}
