// `npm run operators -- --kubeconfig <path> [--only source,kustomize]`: every operator in one
// process for local use, each with its own queue and leader lease, sharing the operator flags.
import { operatorMain } from '@mooring/runtime';
import { allInOneEntry } from './entry.ts';

process.exit(await operatorMain(await allInOneEntry()));
