// Convergence in an easier shape than Flux's benchmark (one GitRepository for all, no wait, no
// impersonation, no substitution; flux-side-by-side.bench.ts runs Flux's real one): N Kustomizations, each applying
// four objects (a Deployment with 0 replicas, a ServiceAccount, a Service, a ConfigMap) from one
// GitRepository, from a cold operator start until every Kustomization is Ready. The operators run
// as one real process (the all-in-one entry, source + kustomize) against the real API server, so
// its peak RSS and its API requests (from its own /metrics) are measured as a user would see them.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KUSTOMIZE_API_VERSION, SOURCE_API_VERSION } from '@mooring/api';
import { KubeClient, type KubeObject } from '@mooring/runtime';
import { GitServer, uniqueName } from '@mooring/test/harness';
import { locationAt, repoRoot, up } from '../../../hack/lib/control-plane.ts';

const SIZES = (process.env.MOORING_BENCH_SIZES ?? '100,500,1000').split(',').map(Number);
const CONCURRENT = process.env.MOORING_BENCH_CONCURRENT ?? '20';
// The API server is local; Flux's default client-side limit (50 requests/s) would be the whole story.
const QPS = process.env.MOORING_BENCH_QPS ?? '1000';
const log = (line: string) => process.stderr.write(`convergence: ${line}\n`);

const manifests = `apiVersion: v1
kind: ServiceAccount
metadata:
  name: app
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: app
data:
  greeting: hello
---
apiVersion: v1
kind: Service
metadata:
  name: app
spec:
  selector: {app: app}
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
spec:
  replicas: 0
  selector: {matchLabels: {app: app}}
  template:
    metadata: {labels: {app: app}}
    spec:
      serviceAccountName: app
      containers: [{name: app, image: ghcr.io/stefanprodan/podinfo:6.7.0}]
`;

interface Run {
  n: number;
  wallMs: number;
  /** From spawning the process to its servers listening: Node, tsx and module loading. */
  startMs: number;
  peakRssMb: number;
  requests: number;
}

async function metricsTotal(port: number): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  let total = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith('mooring_api_request_duration_seconds_count')) total += Number(line.split(' ').pop());
  }
  return total;
}

async function runOnce(client: KubeClient, kubeconfig: string, git: GitServer, n: number): Promise<Run> {
  const namespace = uniqueName(`bench-${n}`);
  await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  const repo = await git.createRepo(namespace);
  await repo.commit({ 'app/manifests.yaml': manifests });
  await client.create({
    apiVersion: SOURCE_API_VERSION,
    kind: 'GitRepository',
    metadata: { name: 'bench', namespace },
    spec: { url: repo.url, interval: '10m', ref: { branch: 'main' } },
  } as KubeObject);
  // Created before the operators start: the clock measures a cold start, as Flux's benchmark does.
  for (let i = 0; i < n; i += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, n - i) }, (_, j) =>
        client.create({
          apiVersion: KUSTOMIZE_API_VERSION,
          kind: 'Kustomization',
          metadata: { name: `ks-${i + j}`, namespace },
          spec: {
            interval: '60m',
            prune: true,
            path: './app',
            namePrefix: `ks-${i + j}-`,
            sourceRef: { kind: 'GitRepository', name: 'bench' },
          },
        } as KubeObject),
      ),
    );
  }
  const storage = await mkdtemp(join(tmpdir(), 'mooring-bench-'));
  const started = Date.now();
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      'operators/all-in-one/src/main.ts',
      '--only',
      'source,kustomize',
      '--kubeconfig',
      kubeconfig,
      '--watch-namespace',
      namespace,
      '--concurrent',
      CONCURRENT,
      '--kube-api-qps',
      QPS,
      '--kube-api-burst',
      QPS,
      '--metrics-addr',
      '127.0.0.1:0',
      '--health-addr',
      '127.0.0.1:0',
      '--storage-path',
      storage,
      '--storage-addr',
      '127.0.0.1:0',
      '--log-level',
      'info',
    ],
    { cwd: repoRoot, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let metricsPort = 0;
  let startMs = 0;
  let out = '';
  // Only the start line is kept: it carries the metrics port.
  child.stdout.on('data', (d: Buffer) => {
    if (!metricsPort) out += d;
    const m = /"metrics":(\d+)/.exec(out);
    if (m && !metricsPort) {
      metricsPort = Number(m[1]);
      startMs = Date.now() - started;
    }
  });
  let peakKb = 0;
  const sampler = setInterval(async () => {
    try {
      const status = await readFile(`/proc/${child.pid}/status`, 'utf8');
      const hwm = /VmHWM:\s+(\d+)/.exec(status);
      if (hwm) peakKb = Math.max(peakKb, Number(hwm[1]));
    } catch {}
  }, 200);
  try {
    let ready = 0;
    for (;;) {
      const list = await client.list<
        KubeObject & { status?: { conditions?: { type: string; status: string }[] } }
      >(KUSTOMIZE_API_VERSION, 'Kustomization', { namespace });
      ready = list.items.filter((k) =>
        k.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
      ).length;
      if (ready === n) break;
      if (Date.now() - started > 15 * 60_000) throw new Error(`only ${ready}/${n} Ready after 15 minutes`);
      await new Promise((r) => setTimeout(r, 250));
    }
    const wallMs = Date.now() - started;
    const requests = metricsPort ? await metricsTotal(metricsPort) : Number.NaN;
    return { n, wallMs, startMs, peakRssMb: peakKb / 1024, requests };
  } finally {
    clearInterval(sampler);
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    await rm(storage, { recursive: true, force: true });
    await client.delete({ apiVersion: 'v1', kind: 'Namespace', name: namespace }).catch(() => {});
  }
}

// A control plane of its own, so the figures are not mixed with a test run's load.
const plane = await up(locationAt(join(repoRoot, '.mooring/bench-control-plane')), log);
const client = await KubeClient.fromKubeconfig(plane.kubeconfig, { qps: 500, burst: 1000 });
const git = await GitServer.start();
const runs: Run[] = [];
try {
  for (const n of SIZES) {
    log(`${n} Kustomizations…`);
    const run = await runOnce(client, plane.kubeconfig, git, n);
    log(
      `${n}: ${(run.wallMs / 1000).toFixed(1)} s (process up after ${(run.startMs / 1000).toFixed(1)} s), ${run.peakRssMb.toFixed(0)} MB, ${run.requests} requests`,
    );
    runs.push(run);
  }
} finally {
  await git.close();
  client.close();
}

console.log(`## Kustomization convergence, Mooring alone, in an easier shape than Flux's benchmark

N Kustomizations, each applying 4 objects (Deployment with 0 replicas, ServiceAccount, Service,
ConfigMap, with a per-Kustomization \`namePrefix\`) from one GitRepository, all created before the
operators start; measured from starting the all-in-one process (\`--only source,kustomize\`,
\`--concurrent ${CONCURRENT}\`, \`--kube-api-qps ${QPS}\`; Flux's default limit of 50 requests/s would bound
1000 Kustomizations at about 5 minutes by itself) until every Kustomization is Ready. Peak RSS is the process's VmHWM;
API requests are the operator's own \`mooring_api_request_duration_seconds_count\` total. The API server
(kube-apiserver + etcd built by \`hack/\`) runs on the same 2-core machine, so it competes for CPU.

| Kustomizations | wall time | of which process start | peak RSS | API requests | requests per Kustomization |
| --- | --- | --- | --- | --- | --- |
${runs
  .map(
    (r) =>
      `| ${r.n} | ${(r.wallMs / 1000).toFixed(1)} s | ${(r.startMs / 1000).toFixed(1)} s | ${r.peakRssMb.toFixed(0)} MB | ${r.requests} | ${(r.requests / r.n).toFixed(1)} |`,
  )
  .join('\n')}

For scale: Flux's published figure is 1000 Kustomizations in about 4 min 13 s at concurrency 20 on a
16-core GitHub runner (fluxcd/flux-benchmark); Mooring's target on this 2-core machine is under 60 s.

Reproduce: \`npm run bench -- convergence\` (\`MOORING_BENCH_SIZES=100\` for a quick run).`);
