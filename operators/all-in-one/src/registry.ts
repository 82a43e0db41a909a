import {
  type DefaultOverrides,
  type FlagTable,
  type OperatorDefinition,
  OptionsError,
} from '@mooring/runtime';

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

/** The all-in-one's own flag. */
export const ALL_IN_ONE_FLAGS: FlagTable = {
  only: {
    type: 'string',
    help: `Run only these operators, comma-separated (${Object.keys(OPERATORS).join(', ')}).`,
    shown: 'all of them',
  },
};

/**
 * Defaults that differ when the operators share one process. Alone, each keeps Flux's: the
 * source operator's artifact server and the notification operator's event server both listen
 * on :9090, in pods of their own. In one process they cannot both, so the event server moves
 * to :9690 (still taken from `--events-addr` when that is set).
 */
export const ALL_IN_ONE_DEFAULTS: DefaultOverrides = {
  'events-listen-addr': { default: ':9690', shown: 'the port of `--events-addr`, else `:9690`' },
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
    throw new OptionsError(`--only: unknown operator ${unknown.join(', ')}: choose from ${known.join(', ')}`);
  return wanted;
}
