// `npm run simulate`: the long run of the deterministic simulation of the reconcile loop
// (test/simulation/): `-- --seeds 10000 [--from N] [--jobs 2]`, or `-- --seed N [--trace]` to replay
// one seed exactly. `npm test` runs a few hundred seeds of the same simulation.
import { main } from '../test/simulation/run.ts';

process.exitCode = await main(process.argv.slice(2));
