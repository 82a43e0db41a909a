// Each operator's start-up to ready and idle RSS, from the bundle the image ships
// (`node .mooring/app/dist/<operator>.mjs`, hack/lib/bundle-operators.ts) against the sources
// through tsx (`node --import tsx operators/<operator>/src/main.ts`), side by side in one run,
// plus the bundle with --enable-source-maps (what its stack traces cost). Against the bench
// control plane with the CRDs installed; ready is the first 200 from /readyz.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  bundleEnv,
  bundleOperators,
  DEFAULT_APP_DIR,
  OPERATOR_ENTRIES,
} from '../../../hack/lib/bundle-operators.ts';
import { locationAt, repoRoot, up } from '../../../hack/lib/control-plane.ts';

const OPERATORS = ['source', 'kustomize', 'notification', 'image-automation'] as const;
const RUNS = 3;
// How long after ready the process is left alone before its RSS is read: informers synced, no work.
const IDLE_MS = 5000;
const EMPTY_NAMESPACE = 'mooring-startup-bench-empty';

type Way = 'bundle' | 'bundle+maps' | 'tsx';

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

async function ownFlags(name: string, dir: string): Promise<string[]> {
  const at = async (): Promise<string> => `127.0.0.1:${await freePort()}`;
  if (name === 'source') return ['--storage-path', dir, '--storage-addr', await at()];
  if (name === 'image-automation') return ['--storage-path', dir];
  if (name === 'notification') return ['--events-listen-addr', await at(), '--receiver-addr', await at()];
  return [];
}

// CPU time the process has used (user + system), from /proc at clock ticks of 10 ms: less moved by
// the machine's load than wall time is.
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8')
    .replace(/^.*\) /, '')
    .split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

function rssMb(pid: number): number {
  const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kb) / 1024;
}

async function startOnce(
  name: string,
  way: Way,
  kubeconfig: string,
): Promise<{ readyMs: number; cpuMs: number; rss: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'mooring-startup-'));
  const health = await freePort();
  const entry =
    way === 'tsx'
      ? ['--import', 'tsx', join(repoRoot, OPERATOR_ENTRIES[name]!)]
      : [
          ...(way === 'bundle+maps' ? ['--enable-source-maps'] : []),
          join(DEFAULT_APP_DIR, 'dist', `${name}.mjs`),
        ];
  const args = [
    ...entry,
    '--kubeconfig',
    kubeconfig,
    '--health-addr',
    `127.0.0.1:${health}`,
    '--metrics-addr',
    `127.0.0.1:${await freePort()}`,
    '--log-level',
    'error',
    // A namespace nothing is in: other benches leave their objects on the shared bench control
    // plane, and an operator reconciling them is not idle.
    '--watch-namespace',
    EMPTY_NAMESPACE,
    ...(await ownFlags(name, dir)),
  ];
  const started = process.hrtime.bigint();
  const child: ChildProcess = spawn(process.execPath, args, {
    cwd: repoRoot,
    // A bundle runs as the image runs it (its environment).
    env: way === 'tsx' ? process.env : bundleEnv(),
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${name} (${way}) exited ${child.exitCode} before ready`);
      const res = await fetch(`http://127.0.0.1:${health}/readyz`).catch(() => undefined);
      if (res?.status === 200) break;
      await sleep(20);
    }
    const readyMs = Number(process.hrtime.bigint() - started) / 1e6;
    const cpu = cpuMs(child.pid!);
    await sleep(IDLE_MS);
    return { readyMs, cpuMs: cpu, rss: rssMb(child.pid!) };
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => (child.exitCode === null ? child.once('exit', r) : r(0)));
    rmSync(dir, { recursive: true, force: true });
  }
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

await bundleOperators();
const plane = await up(locationAt(join(repoRoot, '.mooring/bench-control-plane')));
const load = loadavg()[0]!.toFixed(2);
const ways: Way[] = ['bundle', 'bundle+maps', 'tsx'];
const rows: string[] = [];
const bundleWorst = { readyMs: 0, rss: 0 };
for (const name of OPERATORS) {
  const samples = new Map<Way, { readyMs: number; cpuMs: number; rss: number }[]>(ways.map((w) => [w, []]));
  await startOnce(name, 'tsx', plane.kubeconfig); // warms the file cache and tsx's transform cache
  // Alternating, so every way sees the same machine.
  for (let i = 0; i < RUNS; i++)
    for (const way of ways) samples.get(way)!.push(await startOnce(name, way, plane.kubeconfig));
  const ready = (w: Way): string => median(samples.get(w)!.map((s) => s.readyMs)).toFixed(0);
  const rss = (w: Way): string => median(samples.get(w)!.map((s) => s.rss)).toFixed(0);
  const cpu = (w: Way): string => median(samples.get(w)!.map((s) => s.cpuMs)).toFixed(0);
  bundleWorst.readyMs = Math.max(bundleWorst.readyMs, Number(ready('bundle')));
  bundleWorst.rss = Math.max(bundleWorst.rss, Number(rss('bundle')));
  rows.push(
    `| ${name} | ${ready('bundle')} | ${cpu('bundle')} | ${ready('bundle+maps')} | ${ready('tsx')} | ${rss('bundle')} | ${rss('bundle+maps')} | ${rss('tsx')} |`,
  );
}

process.stdout.write(`## Operator start-up: bundle against tsx

What: from spawning one operator process to its first 200 from \`/readyz\` (informers listed and
watching), and its RSS ${IDLE_MS / 1000} s after that with nothing to reconcile, median of ${RUNS}
runs each, the ways alternating; "CPU to ready" is the process's user + system time at that moment
(/proc, 10 ms ticks), which the machine's load moves less than wall time. "Bundle" is what the image and the Deployments run
(\`node /app/dist/<operator>.mjs\`, hack/lib/bundle-operators.ts); "+maps" the same with
\`--enable-source-maps\`; "tsx" transpiles the sources at start
(\`node --import tsx operators/<operator>/src/main.ts\`). Against the bench control plane with
Mooring's CRDs installed, watching a namespace with no objects (\`--watch-namespace\`). Node ${process.version}, ${cpus().length} CPUs, load
average ${load} when the run started.

| operator | bundle ready (ms) | bundle CPU to ready (ms) | +maps ready (ms) | tsx ready (ms) | bundle RSS (MB) | +maps RSS (MB) | tsx RSS (MB) |
|---|---:|---:|---:|---:|---:|---:|---:|
${rows.join('\n')}

Target (issue #19): ready in under 1 s and idle RSS under 100 MB per operator, as the bundle —
ready ${bundleWorst.readyMs < 1000 ? 'met' : 'missed'} (slowest ${bundleWorst.readyMs} ms), RSS ${bundleWorst.rss < 100 ? 'met' : 'missed'} (largest ${bundleWorst.rss} MB).
Before the operators stopped loading \`@kubernetes/client-node\` and loaded isomorphic-git, openpgp and age on
first use, the bundles took 1.8–3.7 s to ready and 114–123 MB at load 8 (0.8–1.0 s and 114–138 MB at load 2).

Reproduce: \`npm run bench -- startup\`.
`);
