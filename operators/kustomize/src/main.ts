// The kustomize operator as its own process: `node --import tsx operators/kustomize/src/main.ts --kubeconfig <path>`.
import { OptionsError, parseOperatorOptions, runOperators, usage } from '@mooring/runtime';
import { KUSTOMIZE_FLAGS, kustomizeOperator } from './kustomize-operator.ts';

try {
  const options = parseOperatorOptions(process.argv.slice(2), process.env, { extraFlags: KUSTOMIZE_FLAGS });
  if (options.help) {
    console.log(`${usage('mooring-kustomize')}
  --concurrent-ssa N   objects applied in parallel within one Kustomization (8)`);
    process.exit(0);
  }
  process.exitCode = await runOperators([kustomizeOperator()], options);
} catch (err) {
  console.error(`mooring-kustomize: ${(err as Error).message}`);
  process.exitCode = err instanceof OptionsError ? 2 : 1;
}
