// `npm run operators -- --kubeconfig <path> [--only source,kustomize]`: every operator in one
// process for local use, each with its own queue and leader lease, sharing the operator flags.
import { OptionsError, parseOperatorOptions, runOperators, usage } from '@mooring/runtime';
import { OPERATORS, selectOperators } from './registry.ts';

try {
  const options = parseOperatorOptions(process.argv.slice(2), process.env, {
    extraFlags: { only: { type: 'string' } },
  });
  if (options.help) {
    console.log(
      `${usage('mooring-operators')}\n  --only a,b   run only these operators (${Object.keys(OPERATORS).join(', ')})`,
    );
    process.exit(0);
  }
  const names = selectOperators(options.extra.only as string | undefined);
  const defs = await Promise.all(names.map((n) => OPERATORS[n]!()));
  process.exitCode = await runOperators(defs, options);
} catch (err) {
  if (err instanceof OptionsError || err instanceof Error) console.error(`mooring-operators: ${err.message}`);
  process.exitCode = 2;
}
