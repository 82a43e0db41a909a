// How long one `mooring` command takes to start and finish, from the bundle against straight
// through tsx (MOORING_CLI_NO_BUNDLE=1), side by side in one run: two offline commands, and one
// that reads the (empty) bench control plane, where loading the Kubernetes client dominates.
// Peak RSS comes from GNU time when present.
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { locationAt, repoRoot, up } from '../../hack/lib/control-plane.ts';

const BIN = join(repoRoot, 'cli/bin/mooring.js');
const GNU_TIME = '/usr/bin/time';
const RUNS = 7;

interface Sample {
  ms: number;
  rssKb?: number;
}

function runOnce(args: string[], noBundle: boolean): Sample {
  const env = { ...process.env, MOORING_CLI_NO_BUNDLE: noBundle ? '1' : '0' };
  const timed = existsSync(GNU_TIME);
  const command = timed ? GNU_TIME : process.execPath;
  const argv = timed ? ['-f', '%M', process.execPath, BIN, ...args] : [BIN, ...args];
  const start = process.hrtime.bigint();
  const r = spawnSync(command, argv, { env, encoding: 'utf8', maxBuffer: 64 << 20 });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (r.status !== 0) throw new Error(`mooring ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  const rss = timed ? Number(r.stderr.trim().split('\n').pop()) : undefined;
  return { ms, rssKb: Number.isFinite(rss) ? rss : undefined };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function measure(args: string[]): { bundle: Sample; tsx: Sample } {
  runOnce(args, false); // brings the bundle up to date, and warms the file cache for both
  runOnce(args, true);
  const bundle: Sample[] = [];
  const tsx: Sample[] = [];
  // Alternating, so both sides see the same machine.
  for (let i = 0; i < RUNS; i++) {
    bundle.push(runOnce(args, false));
    tsx.push(runOnce(args, true));
  }
  const summary = (xs: Sample[]): Sample => ({
    ms: median(xs.map((x) => x.ms)),
    rssKb: xs[0]?.rssKb === undefined ? undefined : median(xs.map((x) => x.rssKb ?? 0)),
  });
  return { bundle: summary(bundle), tsx: summary(tsx) };
}

// The one-time cost: the first command after a clone, or after a source file changed.
rmSync(join(repoRoot, 'cli/.bundle'), { recursive: true, force: true });
const firstRun = runOnce(['version', '--client'], false);

const plane = await up(locationAt(join(repoRoot, '.mooring/bench-control-plane')));
const cases: [string, string[]][] = [
  ['`version --client`', ['version', '--client']],
  ['`build config/` (the install manifests, 37 objects)', ['build', join(repoRoot, 'config')]],
  ['`get all -A` (bench control plane)', ['get', 'all', '-A', '--kubeconfig', plane.kubeconfig]],
];
const load = loadavg()[0]!.toFixed(2);
const rows = cases.map(([title, args]) => {
  const { bundle, tsx } = measure(args);
  const mb = (s: Sample) => (s.rssKb === undefined ? 'n/a' : (s.rssKb / 1024).toFixed(0));
  return `| ${title} | ${bundle.ms.toFixed(0)} | ${tsx.ms.toFixed(0)} | ${(bundle.ms / tsx.ms).toFixed(2)}× | ${mb(bundle)} | ${mb(tsx)} |`;
});

process.stdout.write(`## CLI start-up: bundle against tsx

What: wall time of one \`node cli/bin/mooring.js …\` process from spawn to exit, median of ${RUNS}
runs each, the two ways alternating. "Bundle" is how \`npx mooring\` runs (cli/.bundle, esbuild);
"tsx" transpiles the sources at start (\`MOORING_CLI_NO_BUNDLE=1\`). Peak RSS from GNU time.
Node ${process.version}, ${cpus().length} CPUs, load average ${load} when the run started.

| command | bundle (ms) | tsx (ms) | bundle / tsx | bundle RSS (MB) | tsx RSS (MB) |
|---|---:|---:|---:|---:|---:|
${rows.join('\n')}

The first command after a clone or an edit also builds the bundle: ${firstRun.ms.toFixed(0)} ms in this run.

Reproduce: \`npm run bench -- startup\`.
`);
