// Flux's own benchmark (fluxcd/flux-benchmark, module flux-ks-bench), run for Mooring and for Flux's
// source-controller and kustomize-controller (built from the Go module proxy by
// hack/lib/build-flux.sh) in the same run, alternately, on the same control plane with workloads:
// N OCIRepositories on one tag of one artifact in Debian's docker-registry, N Kustomizations each on
// its own source (wait, prune, timeout 1m, impersonating a ServiceAccount bound to `admin`,
// targetNamespace, postBuild.substitute), each applying flux-benchmark's four podinfo objects.
// Each run gets a fresh namespace and freshly started controllers; the clock runs from the first
// object created until every Kustomization is Ready. Per tool: peak RSS and CPU seconds of every
// process (from /proc), and API requests from each process's own metrics.
//
// By default two settings (see `settings()`); any of these runs one setting instead:
//   MOORING_BENCH_SIZES=100,500,1000,1000   sizes, each run for both tools (Mooring first)
//   MOORING_BENCH_QPS=1000 MOORING_BENCH_BURST=2000   both tools' client limits
//   MOORING_BENCH_KCM_QPS=200               kube-controller-manager's own limit (default: its own, 20)
//   MOORING_BENCH_TOOLS=mooring             one tool only, for profiling: its log lines, no page
//                                           (default mooring,flux,floor; the floor, floor-tool.ts,
//                                           makes only the writes no tool can leave out)
//   MOORING_BENCH_CONCURRENT=20             Mooring's --concurrent (20, as Flux's in the benchmark)
//   MOORING_BENCH_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof'   Node's flags for Mooring, for profiling
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeClient } from '@mooring/runtime';
import { TestRegistry } from '@mooring/test/harness';
import { bundleEnv, bundleOperators } from '../../../hack/lib/bundle-operators.ts';
import { installCrds, locationAt, readCrds, repoRoot, up } from '../../../hack/lib/control-plane.ts';
import { freePort } from '../../../hack/lib/processes.ts';
import {
  apiServerRequests,
  benchObjects,
  cleanUp,
  cpuSecondsOf,
  createAll,
  createBenchNamespace,
  isReady,
  logTo,
  peakRssKbOf,
  perKustomization,
  planeCpuByProcess,
  planeCpuSecondsOf,
  pushBenchArtifact,
  readyWatch,
  requestsOf,
  type Started,
  stop,
  sumsBy,
  type Tool,
  waitHttp,
} from './flux-shape.ts';

/** One configuration of limits, and the sizes run under it. */
interface Setting {
  /** kube-controller-manager's QPS; undefined is its own default (20, burst 30), what a real cluster runs. */
  kcmQps: number | undefined;
  /** Both tools' client limits. */
  qps: string;
  burst: string;
  sizes: number[];
}

/**
 * The settings run, in order. Default: the benchmark's limits with KCM raised (so the tools, not
 * KCM, are measured) at 100, 500 and twice 1000, then both tools' own defaults (client 50/300,
 * KCM 20) at 500, what users run. The single-setting variables override it for a quick run.
 */
function settings(): Setting[] {
  const env = process.env;
  if (env.MOORING_BENCH_SIZES || env.MOORING_BENCH_QPS || env.MOORING_BENCH_KCM_QPS)
    return [
      {
        kcmQps: env.MOORING_BENCH_KCM_QPS ? Number(env.MOORING_BENCH_KCM_QPS) : undefined,
        qps: env.MOORING_BENCH_QPS ?? '1000',
        burst: env.MOORING_BENCH_BURST ?? '2000',
        sizes: (env.MOORING_BENCH_SIZES ?? '100,500,1000,1000').split(',').map(Number),
      },
    ];
  return [
    { kcmQps: 200, qps: '1000', burst: '2000', sizes: [100, 500, 1000, 1000] },
    { kcmQps: undefined, qps: '50', burst: '300', sizes: [500] },
  ];
}
const SETTINGS = settings();
// Mooring's workers; 20 is Flux's kustomize-controller's in the benchmark. Other values are for profiling.
const CONCURRENT = process.env.MOORING_BENCH_CONCURRENT ?? '20';
const TOOLS = (process.env.MOORING_BENCH_TOOLS ?? 'mooring,flux,floor').split(',') as Tool[];
const FLUX_BIN = join(repoRoot, 'bin/flux');
const log = (line: string) => process.stderr.write(`flux-side-by-side: ${line}\n`);

interface Measured {
  tool: Tool;
  n: number;
  setting: Setting;
  wallMs: number;
  /** Sums over the tool's processes. */
  cpuSeconds: number;
  peakRssMb: number;
  requests: number;
  /** CPU seconds the control plane's own processes (API server, etcd, controllers, kwok) spent. */
  planeCpuSeconds: number;
  load: number;
}

/**
 * One Node process of a tool (Mooring's bundle, the floor), in the image's environment, with a
 * scratch folder and a metrics port of its own; resolved once its metrics answer.
 */
async function startNode(
  what: string,
  logFile: string,
  requestMetric: string,
  args: (metricsPort: number, storage: string) => string[],
): Promise<Started> {
  const storage = await mkdtemp(join(tmpdir(), `${what}-bench-`));
  const metrics = await freePort();
  const proc = spawn(process.execPath, args(metrics, storage), {
    cwd: repoRoot,
    env: bundleEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  logTo(proc, logFile);
  await waitHttp(`http://127.0.0.1:${metrics}/metrics`, what, proc);
  return { procs: [proc], metricsPorts: [metrics], requestMetric, storage };
}

function startMooring(
  kubeconfig: string,
  namespace: string,
  app: string,
  logs: string,
  setting: Setting,
): Promise<Started> {
  return startNode(
    'mooring',
    join(logs, `mooring-${namespace}.log`),
    'mooring_api_request_duration_seconds_count',
    (metrics, storage) => [
      ...(process.env.MOORING_BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean),
      join(app, 'dist/all-in-one.mjs'),
      '--only',
      'source,kustomize',
      '--kubeconfig',
      kubeconfig,
      '--watch-namespace',
      namespace,
      '--concurrent',
      CONCURRENT,
      '--kube-api-qps',
      setting.qps,
      '--kube-api-burst',
      setting.burst,
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
  );
}

/** floor-tool.ts, started as Mooring's bundle is: its own process, so its CPU and memory are its own. */
function startFloor(kubeconfig: string, namespace: string, logs: string, setting: Setting): Promise<Started> {
  return startNode('floor', join(logs, `floor-${namespace}.log`), 'floor_requests_total', (metrics) => [
    '--import',
    'tsx',
    join(repoRoot, 'operators/kustomize/bench/floor-tool.ts'),
    kubeconfig,
    namespace,
    CONCURRENT,
    setting.qps,
    setting.burst,
    String(metrics),
  ]);
}

async function startFlux(
  kubeconfig: string,
  namespace: string,
  logs: string,
  setting: Setting,
): Promise<Started> {
  const storage = await mkdtemp(join(tmpdir(), 'flux-bench-'));
  const [storagePort, sourceMetrics, sourceHealth, ksMetrics, ksHealth] = (await Promise.all(
    Array.from({ length: 5 }, freePort),
  )) as [number, number, number, number, number];
  // Both watch only RUNTIME_NAMESPACE, as Mooring watches only --watch-namespace.
  const env = { ...process.env, KUBECONFIG: kubeconfig, RUNTIME_NAMESPACE: namespace };
  const common = [
    '--watch-all-namespaces=false',
    `--kube-api-qps=${setting.qps}`,
    `--kube-api-burst=${setting.burst}`,
    '--log-level=info',
    '--events-addr=',
  ];
  const source = spawn(
    join(FLUX_BIN, 'source-controller'),
    [
      ...common,
      '--concurrent=10',
      `--storage-path=${storage}`,
      `--storage-addr=127.0.0.1:${storagePort}`,
      `--storage-adv-addr=127.0.0.1:${storagePort}`,
      `--metrics-addr=127.0.0.1:${sourceMetrics}`,
      `--health-addr=127.0.0.1:${sourceHealth}`,
    ],
    { env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  logTo(source, join(logs, `source-controller-${namespace}.log`));
  const kustomize = spawn(
    join(FLUX_BIN, 'kustomize-controller'),
    [
      ...common,
      '--concurrent=20',
      `--metrics-addr=127.0.0.1:${ksMetrics}`,
      `--health-addr=127.0.0.1:${ksHealth}`,
    ],
    { env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  logTo(kustomize, join(logs, `kustomize-controller-${namespace}.log`));
  await waitHttp(`http://127.0.0.1:${sourceHealth}/readyz`, 'source-controller', source);
  await waitHttp(`http://127.0.0.1:${ksHealth}/readyz`, 'kustomize-controller', kustomize);
  return {
    procs: [source, kustomize],
    metricsPorts: [sourceMetrics, ksMetrics],
    requestMetric: 'rest_client_requests_total',
    storage,
  };
}

/**
 * Where a run's time and requests went: API requests by verb per Kustomization for either tool,
 * and for Mooring the mean time of each reconcile step per Kustomization reconcile.
 */
async function breakdown(started: Started, tool: Tool, n: number): Promise<string> {
  if (tool === 'floor') return 'its requests by verb are in the API server line below';
  const byVerb =
    tool === 'flux'
      ? await sumsBy(started, 'rest_client_requests_total', 'method')
      : await sumsBy(started, 'mooring_api_request_duration_seconds_count', 'verb');
  const verbs = [...byVerb].map(([verb, count]) => `${verb} ${(count / n).toFixed(1)}`).join(', ');
  if (tool !== 'mooring') return `requests per Kustomization by verb: ${verbs}`;
  const latencySums = await sumsBy(started, 'mooring_api_request_duration_seconds_sum', 'verb');
  const latency = [...latencySums]
    .map(([verb, sum]) => `${verb} ${((sum / (byVerb.get(verb) ?? 1)) * 1000).toFixed(0)} ms`)
    .join(', ');
  const sums = await sumsBy(started, 'mooring_reconcile_step_duration_seconds_sum', 'step');
  const counts = await sumsBy(started, 'mooring_reconcile_step_duration_seconds_count', 'step');
  const steps = [...sums]
    .filter(([, sum]) => sum >= 0.0005 * n)
    .sort((a, b) => b[1] - a[1])
    .map(
      ([step, sum]) =>
        `${step} ${((sum / (counts.get(step) ?? 1)) * 1000).toFixed(0)} ms × ${counts.get(step)}`,
    )
    .join(', ');
  return `requests per Kustomization by verb: ${verbs}; mean latency by verb: ${latency}; mean step time (all kinds) × passes: ${steps}`;
}

function describeSetting(s: Setting): string {
  return `client ${s.qps}/${s.burst}, KCM ${s.kcmQps ?? 'default (20)'}`;
}

async function runOnce(
  client: KubeClient,
  kubeconfig: string,
  tool: Tool,
  n: number,
  url: string,
  app: string,
  logs: string,
  setting: Setting,
  planeDir: string,
): Promise<Measured> {
  const namespace = `bench-${tool}-${n}-${Date.now().toString(36)}`;
  await createBenchNamespace(client, namespace);
  const started =
    tool === 'flux'
      ? await startFlux(kubeconfig, namespace, logs, setting)
      : tool === 'floor'
        ? await startFloor(kubeconfig, namespace, logs, setting)
        : await startMooring(kubeconfig, namespace, app, logs, setting);
  const pids = started.procs.map((p) => p.pid!);
  const requestsBefore = await requestsOf(started);
  const cpuBefore = await Promise.all(pids.map(cpuSecondsOf));
  const planeCpuBefore = await planeCpuSecondsOf(planeDir, pids);
  const planeByProcessBefore = await planeCpuByProcess(planeDir, pids);
  const serverRequestsBefore = await apiServerRequests(client);
  const load0 = loadavg()[0]!;
  const watch = readyWatch(client, tool, namespace);
  await watch.start();
  const ready = { count: () => watch.list().filter(isReady).length };
  try {
    const t0 = Date.now();
    for (const batch of benchObjects(tool, namespace, n, url)) await createAll(client, batch);
    for (;;) {
      if (ready.count() === n) break;
      if (started.procs.some((p) => p.exitCode !== null))
        throw new Error(`${tool} exited; see its log in ${logs}`);
      if (Date.now() - t0 > 20 * 60_000)
        throw new Error(`${tool}: only ${ready.count()}/${n} Ready after 20 minutes`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const wallMs = Date.now() - t0;
    // Read before the breakdown's scrapes, which cost Mooring's process a second or two at 1000.
    const cpuAfter = await Promise.all(pids.map(cpuSecondsOf));
    const planeCpuAfter = await planeCpuSecondsOf(planeDir, pids);
    const load1 = loadavg()[0]!;
    log(`${tool} ${n}: ${await breakdown(started, tool, n)}`);
    // What the control plane did, every client's requests together (KCM's, kwok's, the bench's too).
    log(
      `${tool} ${n}: API server requests per Kustomization: ${perKustomization(serverRequestsBefore, await apiServerRequests(client), n)}`,
    );
    log(
      `${tool} ${n}: control plane CPU s per Kustomization by process: ${perKustomization(planeByProcessBefore, await planeCpuByProcess(planeDir, pids), n)}`,
    );
    const peaks = await Promise.all(started.procs.map((p) => peakRssKbOf(p.pid!)));
    return {
      tool,
      n,
      setting,
      wallMs,
      cpuSeconds: cpuAfter.reduce((a, b, i) => a + b - cpuBefore[i]!, 0),
      peakRssMb: peaks.reduce((a, b) => a + b, 0) / 1024,
      requests: (await requestsOf(started)) - requestsBefore,
      planeCpuSeconds: planeCpuAfter - planeCpuBefore,
      load: (load0 + load1) / 2,
    };
  } finally {
    await watch.stop();
    await stop(started);
    await cleanUp(client, tool, namespace);
  }
}

if (TOOLS.includes('flux')) {
  if (!existsSync(join(FLUX_BIN, 'kustomize-controller')) || !existsSync(join(FLUX_BIN, 'source-controller')))
    log('building Flux controllers (bash hack/lib/build-flux.sh)');
  // stdout carries only the Markdown section hack/bench.ts writes into docs/benchmarks.md.
  execFileSync('bash', [join(repoRoot, 'hack/lib/build-flux.sh')], { stdio: ['ignore', 2, 2] });
}
log('bundling the operators (what the image runs)');
const { appDir } = await bundleOperators();

const registry = await TestRegistry.start();
const logs = await mkdtemp(join(tmpdir(), 'flux-side-by-side-logs-'));
const results: Measured[] = [];
try {
  for (const setting of SETTINGS) {
    const planeDir = join(repoRoot, `.mooring/bench-flux-plane-kcm${setting.kcmQps ?? 'default'}`);
    const plane = await up(locationAt(planeDir), log, { workloads: true, kcmQps: setting.kcmQps });
    const client = await KubeClient.fromKubeconfig(plane.kubeconfig, { qps: 500, burst: 1000 });
    try {
      if (TOOLS.includes('flux')) await installCrds(client, readCrds(join(FLUX_BIN, 'crds')));
      const url = await pushBenchArtifact(
        registry,
        join(repoRoot, 'operators/kustomize/bench/testdata/flux-benchmark/podinfo'),
      );
      for (const n of setting.sizes) {
        for (const tool of TOOLS) {
          log(`${tool}: ${n} Kustomizations, ${describeSetting(setting)}…`);
          const m = await runOnce(client, plane.kubeconfig, tool, n, url, appDir, logs, setting, planeDir);
          log(
            `${tool} ${n}: ${(m.wallMs / 1000).toFixed(1)} s, ${m.cpuSeconds.toFixed(1)} CPU s (control plane ${m.planeCpuSeconds.toFixed(1)}), ${m.peakRssMb.toFixed(0)} MB, ${m.requests} requests, load ${m.load.toFixed(1)}`,
          );
          results.push(m);
        }
      }
    } finally {
      client.close();
    }
  }
} finally {
  await registry.close();
}

if (!TOOLS.includes('mooring') || !TOOLS.includes('flux')) {
  log('not both tools: the figures are the log lines above; the page is not written');
  process.exit(0);
}
const withFloor = TOOLS.includes('floor');
const rows: string[] = [];
// Each size's run of every tool, in TOOLS' order.
for (let i = 0; i + TOOLS.length <= results.length; i += TOOLS.length) {
  const of = (tool: Tool) => results[i + TOOLS.indexOf(tool)]!;
  const m = of('mooring');
  const f = of('flux');
  const floor = withFloor
    ? ` ${(of('floor').wallMs / 1000).toFixed(1)} s | ${of('floor').planeCpuSeconds.toFixed(0)} | ${(m.wallMs / of('floor').wallMs).toFixed(2)}× |`
    : '';
  rows.push(
    `| ${m.n} | ${m.setting.qps} / ${m.setting.burst} | ${m.setting.kcmQps ?? '20 (default)'} | ${(f.wallMs / 1000).toFixed(1)} s | ${(m.wallMs / 1000).toFixed(1)} s | ${(m.wallMs / f.wallMs).toFixed(2)}× | ${(f.requests / f.n).toFixed(1)} / ${(m.requests / m.n).toFixed(1)} | ${f.cpuSeconds.toFixed(1)} / ${m.cpuSeconds.toFixed(1)} | ${f.planeCpuSeconds.toFixed(0)} / ${m.planeCpuSeconds.toFixed(0)} | ${f.peakRssMb.toFixed(0)} / ${m.peakRssMb.toFixed(0)} MB | ${f.load.toFixed(1)} / ${m.load.toFixed(1)} |${floor}`,
  );
}
const fluxVersions = readFileSync(join(repoRoot, 'hack/lib/build-flux.sh'), 'utf8')
  .match(/_VERSION=(v[\d.]+)/g)
  ?.map((s) => s.split('=')[1])
  .join(' / ');

console.log(`## Side by side with Flux, in Flux's own benchmark shape (issue #21)

fluxcd/flux-benchmark's \`flux-ks-bench\`: N OCIRepositories (\`interval: 60m\`, \`insecure\`, one tag of one
artifact pushed once in Flux's format to Debian's docker-registry on loopback) and N Kustomizations,
each on its own source (\`interval: 60m\`, \`retryInterval: 2m\`, \`path: ./\`, \`prune\`, \`wait\`,
\`timeout: 1m\`, \`serviceAccountName\` bound to \`admin\`, \`targetNamespace\`, \`postBuild.substitute\`
with \`INDEX\`, \`PODS\` and \`MCPU\`), each applying the benchmark's ServiceAccount, Service, Deployment
(0 replicas) and Ingress. Flux is source-controller and kustomize-controller ${fluxVersions} built from the Go
module proxy (\`hack/lib/build-flux.sh\`), \`--concurrent\` 10 and 20; Mooring is the all-in-one bundle
(\`--only source,kustomize\`, \`--concurrent 20\`). Both watch only the run's namespace, with the client limits
in the table: the benchmark's 1000/2000 with kube-controller-manager's limit raised to 200 (so the tools, not
KCM, are measured), and both tools' defaults, 50/300, with KCM's default 20 (burst 30), what users run. The tools run alternately (Mooring first)
on the same local control plane with workloads (kube-apiserver, etcd, kube-controller-manager,
kube-scheduler, kwok), each run on a fresh namespace with freshly started controllers, timed from the
first object created until every Kustomization is Ready. CPU seconds and peak RSS are summed over
each tool's processes (Flux: two); requests are each process's own metrics
(\`rest_client_requests_total\`, \`mooring_api_request_duration_seconds_count\`). Load is the 1-minute
load average at start and end of the run, averaged; the control plane's CPU is what its processes (kube-apiserver,
etcd, kube-controller-manager, kube-scheduler, kwok) spent during the run. Everything runs on one 2-core machine.

| Kustomizations | client QPS / burst | KCM QPS | Flux | Mooring | Mooring / Flux | API requests per Kustomization, Flux / Mooring | CPU s, Flux / Mooring | control plane's CPU s, Flux / Mooring | peak RSS, Flux / Mooring | load, Flux / Mooring |${withFloor ? " floor | control plane's CPU s, floor | Mooring / floor |" : ''}
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |${withFloor ? ' --- | --- | --- |' : ''}
${rows.join('\n')}
${
  withFloor
    ? `
The floor (\`operators/kustomize/bench/floor-tool.ts\`, run third on a fresh namespace like the others) is
not a tool: it makes only the writes no tool can leave out, one status write per source, the four
server-side applies as the ServiceAccount, a wait on a watch for the Deployment to be Available and
one status write per Kustomization, with no finalizers, dry runs, reads, events or inventory intent.
It uses Mooring's kinds and the same client limits and concurrency.
`
    : ''
}

Reproduce: \`npm run bench -- flux-side-by-side\` (about 30 minutes; \`MOORING_BENCH_SIZES=100
MOORING_BENCH_KCM_QPS=200\` for a quick run of one setting, \`MOORING_BENCH_QPS\`/\`_BURST\` for its client limits).`);
