// `npm run chaos [-- --trials N] [--seed S]`: the fault suite's kill -9 trials for as long as you
// like, on a control plane of its own (.mooring/chaos-control-plane, started or reused and left
// up; `hack/control-plane down --dir .mooring/chaos-control-plane` stops it), so a test run that
// ends and stops the test plane cannot cut a long run short. Prints one line a trial
// and a summary: orphans at the kill, invariant violations after recovery, convergence times.
// A failing trial prints its seed; `--seed <it> --trials 1` replays it.
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { KubeClient } from '@mooring/runtime';
import { runKillTrials } from '../test/fault/kill-trials.ts';
import { locationAt, repoRoot, up } from './lib/control-plane.ts';

const { values } = parseArgs({
  options: {
    trials: { type: 'string', default: '100' },
    seed: { type: 'string', default: String(Date.now() % 1_000_000_000) },
    kustomizations: { type: 'string', default: '4' },
    objects: { type: 'string', default: '24' },
  },
});

const { kubeconfig } = await up(locationAt(join(repoRoot, '.mooring/chaos-control-plane')), (line: string) =>
  console.log(line),
);
const client = await KubeClient.fromKubeconfig(kubeconfig, { qps: 200, burst: 400 });
const seed = Number(values.seed);
console.log(`chaos: ${values.trials} trials from seed ${seed}`);
const results = await runKillTrials({
  client,
  kubeconfig,
  seed,
  trials: Number(values.trials),
  kustomizations: Number(values.kustomizations),
  maxObjects: Number(values.objects),
  log: (line: string) => console.log(line),
});
const times = results.map((r) => r.convergenceMs).sort((a, b) => a - b);
const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))];
const orphans = results.reduce((n, r) => n + r.orphansAtKill.length, 0);
const violations = results.filter((r) => r.violations.length);
const mid = results.filter((r) => r.appliedAtKill > 0).length;
console.log(
  `chaos: ${results.length - 1} kill trials + 1 deletion; ${mid} killed with objects applied; ` +
    `${orphans} orphans at the kill; ${violations.length} trials with violations; ` +
    `convergence after restart min ${times[0]} ms, median ${at(0.5)} ms, p95 ${at(0.95)} ms, max ${times.at(-1)} ms`,
);
for (const r of results.filter((x) => x.orphansAtKill.length || x.violations.length)) {
  console.log(`chaos: seed ${r.seed}: orphans ${r.orphansAtKill.join(', ')}; ${r.violations.join('; ')}`);
}
client.close();
process.exit(orphans || violations.length ? 1 : 0);
