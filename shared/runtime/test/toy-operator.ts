// The toy reconciler as a real operator process, for the tests that kill, stop and fail over
// whole processes. TOY_ID names the replica in the status it writes; TOY_LEASE_MS shortens the
// leader lease so a failover test takes seconds, not the production 35.

import { runOperators } from '../src/operator.ts';
import { parseOperatorOptions } from '../src/operator-options.ts';
import { toyReconciler } from './toy.ts';

const options = parseOperatorOptions(process.argv.slice(2), process.env);
const leaseMs = Number(process.env.TOY_LEASE_MS ?? 0);
const lease = leaseMs
  ? { leaseDurationMs: leaseMs, renewDeadlineMs: leaseMs * 0.75, retryPeriodMs: leaseMs / 10 }
  : undefined;
process.exitCode = await runOperators([{ name: 'toy', reconcilers: () => [toyReconciler()] }], options, {
  lease,
});
