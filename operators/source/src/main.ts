// The source operator as its own process: `node --import tsx operators/source/src/main.ts --kubeconfig <path>`.
import { OptionsError, parseOperatorOptions, runOperators, usage } from '@mooring/runtime';
import { SOURCE_FLAGS } from './source-flags.ts';
import { sourceOperator } from './source-operator.ts';

try {
  const options = parseOperatorOptions(process.argv.slice(2), process.env, { extraFlags: SOURCE_FLAGS });
  if (options.help) {
    console.log(
      `${usage('mooring-source')}
  --storage-path DIR                 where artifacts are kept (/data)
  --storage-addr ADDR                where the artifact server listens (:9090)
  --storage-adv-addr HOST[:PORT]     host consumers use in artifact URLs (localhost:<port> outside a cluster)
  --artifact-retention-records N     artifacts kept per object (2)
  --artifact-retention-ttl DURATION  how long an older artifact survives (60s)
  --git-backend cli|isomorphic       git command line or in-process isomorphic-git (cli)`,
    );
    process.exit(0);
  }
  process.exitCode = await runOperators([sourceOperator()], options);
} catch (err) {
  console.error(`mooring-source: ${(err as Error).message}`);
  process.exitCode = err instanceof OptionsError ? 2 : 1;
}
