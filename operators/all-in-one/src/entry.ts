import type { OperatorEntry } from '@mooring/runtime';
import { ALL_IN_ONE_DEFAULTS, ALL_IN_ONE_FLAGS, OPERATORS, selectOperators } from './registry.ts';

/**
 * The all-in-one program: every operator loaded, so one command line fits whichever `--only`
 * picks, each operator's flags accepted, and the defaults of ALL_IN_ONE_DEFAULTS.
 */
export async function allInOneEntry(): Promise<OperatorEntry> {
  const operators = await Promise.all(Object.values(OPERATORS).map((load) => load()));
  return {
    program: 'mooring-operators',
    operators,
    flags: ALL_IN_ONE_FLAGS,
    defaults: ALL_IN_ONE_DEFAULTS,
    select: (options, all) => {
      const names = selectOperators(options.extra.only as string | undefined);
      return all.filter((def) => names.includes(def.name));
    },
  };
}
