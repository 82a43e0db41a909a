// The image-automation operator as its own process:
// `node --import tsx operators/image-automation/src/main.ts --kubeconfig <path>`.
import { OptionsError, parseOperatorOptions, runOperators, usage } from '@mooring/runtime';
import { imageAutomationOperator } from './image-automation-operator.ts';
import { IMAGE_FLAGS, imageOptions } from './image-flags.ts';

try {
  const options = parseOperatorOptions(process.argv.slice(2), process.env, { extraFlags: IMAGE_FLAGS });
  if (options.help) {
    console.log(
      `${usage('mooring-image-automation')}
  --storage-path DIR                 where scanned tag lists are kept (/data)
  --git-backend cli|isomorphic       git command line or in-process isomorphic-git (cli)`,
    );
    process.exit(0);
  }
  imageOptions(options); // a bad flag fails here, with exit code 2, before anything connects
  process.exitCode = await runOperators([imageAutomationOperator()], options);
} catch (err) {
  console.error(`mooring-image-automation: ${(err as Error).message}`);
  process.exitCode = err instanceof OptionsError ? 2 : 1;
}
