// `npm run operators -- --kubeconfig <path> [--only source,kustomize]`: every operator in one
// process for local use, each with its own queue and leader lease, sharing the operator flags.
import { OptionsError, parseOperatorOptions, runOperators, usage } from '@mooring/runtime';
import { OPERATORS, selectOperators } from './registry.ts';

try {
  // Every operator's own flags are accepted whichever `--only` picks, so one command line fits all.
  const all = await Promise.all(
    Object.entries(OPERATORS).map(async ([n, load]) => [n, await load()] as const),
  );
  const extraFlags = Object.assign(
    { only: { type: 'string' as const } },
    ...all.map(([, def]) => def.extraFlags ?? {}),
  );
  const options = parseOperatorOptions(process.argv.slice(2), process.env, { extraFlags });
  if (options.help) {
    console.log(
      `${usage('mooring-operators')}\n  --only a,b   run only these operators (${Object.keys(OPERATORS).join(', ')})`,
    );
    process.exit(0);
  }
  const names = selectOperators(options.extra.only as string | undefined);
  const defs = all.filter(([n]) => names.includes(n)).map(([, def]) => def);
  process.exitCode = await runOperators(defs, options);
} catch (err) {
  if (err instanceof OptionsError || err instanceof Error) console.error(`mooring-operators: ${err.message}`);
  process.exitCode = 2;
}
