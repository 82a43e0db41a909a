// Scale out (issue #21): N Kustomizations in Flux's benchmark shape (flux-shape.ts) split over S
// replicas of the all-in-one bundle (`--only source,kustomize`) by Flux's sharding pattern: every
// OCIRepository and Kustomization carries `sharding.fluxcd.io/key: shard-<i mod S>`, and replica k
// runs with `--watch-label-selector sharding.fluxcd.io/key=shard-k` under `--leader-elect`, so each
// shard elects its leader on its own Lease. On the control plane with workloads (kube-controller-
// manager at 200 QPS, as flux-side-by-side's first setting), client limits 1000/2000 per replica.
//
// When a quarter of all Kustomizations are Ready, shard 0's replica is killed (SIGKILL, as a node
// loss or an OOM kill): the others must go on to converge while it is down. Once they have, it is
// started again and converges its own. Per shard: time until all its Kustomizations were Ready
// (shard 0's includes its outage), CPU seconds, peak RSS, API requests per Kustomization.
//
//   MOORING_BENCH_SIZE=10000   Kustomizations in all
//   MOORING_BENCH_SHARDS=4     replicas
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Informer, KubeClient } from '@mooring/runtime';
import { TestRegistry } from '@mooring/test/harness';
import { bundleEnv, bundleOperators } from '../../../hack/lib/bundle-operators.ts';
import { locationAt, repoRoot, up } from '../../../hack/lib/control-plane.ts';
import { freePort } from '../../../hack/lib/processes.ts';
import {
  benchObjects,
  cleanUp,
  cpuSecondsOf,
  createAll,
  createBenchNamespace,
  isReady,
  logTo,
  peakRssKbOf,
  planeCpuSecondsOf,
  pushBenchArtifact,
  readyWatch,
  requestsOf,
  type Started,
  type WithReady,
  waitHttp,
} from './flux-shape.ts';

const N = Number(process.env.MOORING_BENCH_SIZE ?? 10_000);
const SHARDS = Number(process.env.MOORING_BENCH_SHARDS ?? 4);
const KCM_QPS = 200;
const SHARD_LABEL = 'sharding.fluxcd.io/key';
const log = (line: string) => process.stderr.write(`sharding: ${line}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One replica's life; shard 0 has two (before and after its kill), the figures add up. */
interface Replica {
  started: Started;
  proc: ChildProcess;
}

interface ShardFigures {
  /** Ms from the first object created until every Kustomization of the shard was Ready. */
  readyMs?: number;
  /** Kustomizations Ready when shard 0 was killed. */
  readyAtKill?: number;
  cpuSeconds: number;
  peakRssMb: number;
  requests: number;
}

async function startReplica(
  kubeconfig: string,
  namespace: string,
  app: string,
  logs: string,
  shard: number,
  life: number,
  storage: string,
): Promise<Replica> {
  const metrics = await freePort();
  const proc = spawn(
    process.execPath,
    [
      join(app, 'dist/all-in-one.mjs'),
      '--only',
      'source,kustomize',
      '--kubeconfig',
      kubeconfig,
      '--watch-namespace',
      namespace,
      '--watch-label-selector',
      `${SHARD_LABEL}=shard-${shard}`,
      '--leader-elect',
      '--leader-election-namespace',
      namespace,
      '--concurrent',
      '20',
      '--kube-api-qps',
      '1000',
      '--kube-api-burst',
      '2000',
      '--metrics-addr',
      `127.0.0.1:${metrics}`,
      '--health-addr',
      '127.0.0.1:0',
      '--storage-path',
      storage,
      '--storage-addr',
      '127.0.0.1:0',
      '--log-level',
      'info',
    ],
    // As the image runs it (its environment).
    { cwd: repoRoot, env: bundleEnv(), stdio: ['ignore', 'pipe', 'pipe'] },
  );
  logTo(proc, join(logs, `shard-${shard}-${life}.log`));
  await waitHttp(`http://127.0.0.1:${metrics}/metrics`, `shard ${shard}`, proc);
  return {
    proc,
    started: {
      procs: [proc],
      metricsPorts: [metrics],
      requestMetric: 'mooring_api_request_duration_seconds_count',
      storage,
    },
  };
}

/** Adds a replica's CPU, peak RSS (the larger life) and requests to its shard's figures; call before it exits. */
async function account(figures: ShardFigures, replica: Replica): Promise<void> {
  const pid = replica.proc.pid!;
  figures.cpuSeconds += await cpuSecondsOf(pid);
  figures.peakRssMb = Math.max(figures.peakRssMb, (await peakRssKbOf(pid)) / 1024);
  figures.requests += await requestsOf(replica.started);
}

function readyByShard(watch: Informer<WithReady>): number[] {
  const ready = Array.from({ length: SHARDS }, () => 0);
  for (const k of watch.list()) {
    if (!isReady(k)) continue;
    const shard = Number(k.metadata.labels?.[SHARD_LABEL]?.replace('shard-', ''));
    ready[shard] = (ready[shard] ?? 0) + 1;
  }
  return ready;
}

const perShard = (shard: number) => Math.floor(N / SHARDS) + (shard < N % SHARDS ? 1 : 0);

log('bundling the operators (what the image runs)');
const { appDir } = await bundleOperators();
const registry = await TestRegistry.start();
const logs = await mkdtemp(join(tmpdir(), 'sharding-logs-'));
const planeDir = join(repoRoot, `.mooring/bench-flux-plane-kcm${KCM_QPS}`);
const plane = await up(locationAt(planeDir), log, { workloads: true, kcmQps: KCM_QPS });
const client = await KubeClient.fromKubeconfig(plane.kubeconfig, { qps: 500, burst: 1000 });
const namespace = `bench-shards-${N}-${Date.now().toString(36)}`;
const figures: ShardFigures[] = Array.from({ length: SHARDS }, () => ({
  cpuSeconds: 0,
  peakRssMb: 0,
  requests: 0,
}));
const replicas: Replica[] = [];
// The replicas' --kubeconfig names the control plane's directory: their CPU is not the plane's.
const replicaPids = () => replicas.map((r) => r.proc.pid!);
const storages: string[] = [];
let wallMs = 0;
let killAfterMs = 0;
let restartAfterMs = 0;
let planeCpuSeconds = 0;
let load0 = 0;
let watch: Informer<WithReady> | undefined;
try {
  const url = await pushBenchArtifact(
    registry,
    join(repoRoot, 'operators/kustomize/bench/testdata/flux-benchmark/podinfo'),
  );
  await createBenchNamespace(client, namespace);
  for (let shard = 0; shard < SHARDS; shard++) {
    storages.push(await mkdtemp(join(tmpdir(), `sharding-${shard}-`)));
    replicas.push(await startReplica(plane.kubeconfig, namespace, appDir, logs, shard, 1, storages[shard]!));
  }
  watch = readyWatch(client, 'mooring', namespace);
  await watch.start();
  const planeCpuBefore = await planeCpuSecondsOf(planeDir, replicaPids());
  load0 = loadavg()[0]!;
  log(`${N} Kustomizations over ${SHARDS} shards…`);
  const t0 = Date.now();
  const labelsOf = (i: number) => ({ [SHARD_LABEL]: `shard-${i % SHARDS}` });
  for (const batch of benchObjects('mooring', namespace, N, url, labelsOf)) await createAll(client, batch);
  let killed = false;
  let restarted = false;
  let lastLog = 0;
  for (;;) {
    const ready = readyByShard(watch);
    const now = Date.now() - t0;
    ready.forEach((count, shard) => {
      if (count === perShard(shard) && figures[shard]!.readyMs === undefined) {
        figures[shard]!.readyMs = now;
        log(`shard ${shard}: all ${count} Ready at ${(now / 1000).toFixed(1)} s`);
      }
    });
    const total = ready.reduce((a, b) => a + b, 0);
    if (now - lastLog > 30_000) {
      log(`${(now / 1000).toFixed(0)} s: Ready ${ready.join(' / ')} (load ${loadavg()[0]!.toFixed(1)})`);
      lastLog = now;
    }
    if (!killed && total >= N / 4) {
      // Counted before it dies: a SIGKILLed process leaves no /proc entry to read.
      await account(figures[0]!, replicas[0]!);
      replicas[0]!.proc.kill('SIGKILL');
      await new Promise((r) => replicas[0]!.proc.once('exit', r));
      killed = true;
      killAfterMs = now;
      ready.forEach((count, shard) => {
        figures[shard]!.readyAtKill = count;
      });
      log(`shard 0 killed at ${(now / 1000).toFixed(1)} s with Ready ${ready.join(' / ')}`);
    }
    const othersDone = figures.slice(1).every((f) => f.readyMs !== undefined);
    if (killed && !restarted && othersDone) {
      restarted = true;
      restartAfterMs = Date.now() - t0;
      log(`the other shards converged while shard 0 was down; starting it again`);
      replicas[0] = await startReplica(plane.kubeconfig, namespace, appDir, logs, 0, 2, storages[0]!);
    }
    if (figures.every((f) => f.readyMs !== undefined) && restarted) {
      wallMs = Date.now() - t0;
      break;
    }
    for (const [shard, r] of replicas.entries())
      if (r.proc.exitCode !== null && !(shard === 0 && killed && !restarted))
        throw new Error(`shard ${shard} exited (${r.proc.exitCode}); see ${logs}`);
    if (now > 60 * 60_000) throw new Error(`only ${ready.join(' / ')} Ready after an hour; see ${logs}`);
    await sleep(1_000);
  }
  planeCpuSeconds = (await planeCpuSecondsOf(planeDir, replicaPids())) - planeCpuBefore;
  for (const [shard, r] of replicas.entries()) await account(figures[shard]!, r);
} finally {
  await watch?.stop();
  for (const r of replicas) {
    if (r.proc.exitCode !== null) continue;
    r.proc.kill('SIGTERM');
    await new Promise((res) => r.proc.once('exit', res));
  }
  for (const dir of storages) await rm(dir, { recursive: true, force: true });
  await cleanUp(client, 'mooring', namespace);
  client.close();
  await registry.close();
}

const load = (load0 + loadavg()[0]!) / 2;
const rows = figures.map(
  (f, shard) =>
    `| shard-${shard} | ${perShard(shard)} | ${f.readyAtKill ?? '–'} | ${((f.readyMs ?? 0) / 1000).toFixed(1)} s${shard === 0 ? ' (killed, restarted)' : ''} | ${f.cpuSeconds.toFixed(1)} | ${f.peakRssMb.toFixed(0)} MB | ${(f.requests / perShard(shard)).toFixed(1)} |`,
);
console.log(`## Scale out: ${N.toLocaleString('en')} Kustomizations over ${SHARDS} sharded replicas (issue #21)

What: ${N.toLocaleString('en')} OCIRepositories and Kustomizations in Flux's benchmark shape (as in the
side-by-side table: \`wait\`, \`prune\`, \`timeout: 1m\`, \`serviceAccountName\` bound to \`admin\`,
\`postBuild.substitute\`, four objects each), labelled \`${SHARD_LABEL}: shard-<i mod ${SHARDS}>\`, and
${SHARDS} replicas of the all-in-one bundle (\`--only source,kustomize\`, \`--concurrent 20\`, client 1000/2000),
each with \`--watch-label-selector ${SHARD_LABEL}=shard-k\` and \`--leader-elect\` (a Lease per shard),
on the control plane with workloads (kube-controller-manager at ${KCM_QPS} QPS), one 2-core machine. When a
quarter of all were Ready (${(killAfterMs / 1000).toFixed(1)} s) shard-0's replica was killed with SIGKILL;
the other shards converged while it was down, and it was started again at ${(restartAfterMs / 1000).toFixed(1)} s.
All ${N.toLocaleString('en')} were Ready after ${(wallMs / 1000).toFixed(1)} s. The control plane's processes spent
${planeCpuSeconds.toFixed(0)} CPU s; load average ${load.toFixed(1)} (start and end, averaged).

| shard | Kustomizations | Ready when shard-0 was killed | all Ready after | CPU s | peak RSS | API requests per Kustomization |
| --- | ---: | ---: | ---: | ---: | ---: | ---: |
${rows.join('\n')}

Shard-0's CPU and requests add up its two lives; its peak RSS is the larger. Reproduce:
\`npm run bench -- sharding\` (\`MOORING_BENCH_SIZE\`, \`MOORING_BENCH_SHARDS\`).`);
