// Forced no-op reconciles and memory (issue #21's "No-op reconcile" and "Memory" targets): N
// Kustomizations (one GitRepository, four objects each, as convergence.bench.ts, with Flux's
// benchmark's wait, timeout and impersonated ServiceAccount) converge on the all-in-one bundle on a
// control plane with workloads (kube-controller-manager rolls the Deployments out); then every
// Kustomization is asked to reconcile (a new reconcile.mooring.dev/requestedAt) with nothing new
// in Git and nothing drifted, PASSES times.
// Per pass: the operator's own API requests by verb and renders per Kustomization, from its
// /metrics, and its RSS after the pass; and the RSS it holds per 1,000 tracked objects (converged
// minus idle).
import { type ChildProcess, spawn } from 'node:child_process';
import { copyFile, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { KUSTOMIZE_API_VERSION, RECONCILE_REQUESTED_AT_ANNOTATION, SOURCE_API_VERSION } from '@mooring/api';
import { KubeClient, type KubeObject } from '@mooring/runtime';
import { GitServer, uniqueName } from '@mooring/test/harness';
import { BUNDLE_RUNTIME_ENV, bundleEnv, bundleOperators } from '../../../hack/lib/bundle-operators.ts';
import { locationAt, repoRoot, up } from '../../../hack/lib/control-plane.ts';
import { freePort } from '../../../hack/lib/processes.ts';
import { removeNamespace } from '../../../hack/lib/remove-namespace.ts';
import { cpuSecondsOf } from './flux-shape.ts';
import { type HeapGroup, summariseHeap } from './heap-summary.ts';

const N = Number(process.env.MOORING_BENCH_SIZE ?? 1000);
const PASSES = Number(process.env.MOORING_BENCH_PASSES ?? 3);
const OBJECTS_EACH = 4;
const log = (line: string) => process.stderr.write(`noop-passes: ${line}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** How long the process is left with nothing to do before the second memory sample. */
const SETTLE_MS = 30_000;

const manifests = `apiVersion: v1
kind: ServiceAccount
metadata: {name: app}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: app}
data: {greeting: hello}
---
apiVersion: v1
kind: Service
metadata: {name: app}
spec:
  selector: {app: app}
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: app}
spec:
  replicas: 0
  selector: {matchLabels: {app: app}}
  template:
    metadata: {labels: {app: app}}
    spec:
      serviceAccountName: app
      containers: [{name: app, image: ghcr.io/stefanprodan/podinfo:6.7.0}]
`;

/** A metric's values summed by one label, from the operator's /metrics. */
async function sumsBy(port: number, metric: string, label: string): Promise<Map<string, number>> {
  const sums = new Map<string, number>();
  const pattern = new RegExp(`^${metric}\\{(.*)\\} (\\S+)$`);
  const text = await metricsText(port);
  for (const line of text.split('\n')) {
    const m = pattern.exec(line);
    const value = m ? new RegExp(`${label}="([^"]*)"`).exec(m[1]!)?.[1] : undefined;
    if (m && value !== undefined) sums.set(value, (sums.get(value) ?? 0) + Number(m[2]));
  }
  return sums;
}

const minus = (after: Map<string, number>, before: Map<string, number>): Map<string, number> =>
  new Map(
    [...after].map(([k, v]) => [k, v - (before.get(k) ?? 0)]).filter(([, v]) => Number(v) > 0) as [
      string,
      number,
    ][],
  );
const total = (m: Map<string, number>): number => [...m.values()].reduce((a, b) => a + b, 0);

/**
 * The V8 heap from one read of /metrics, in MB: in use (RSS keeps pages a collection freed), and
 * committed (its pages, in RSS whether used or not) with the young generation's part of it.
 */
async function heapStats(port: number): Promise<{ usedMb: number; totalMb: number; newSpaceMb: number }> {
  const text = await metricsText(port);
  const mb = (re: RegExp) => Number(re.exec(text)?.[1] ?? Number.NaN) / 1024 / 1024;
  return {
    usedMb: mb(/^nodejs_heap_size_used_bytes (\S+)$/m),
    totalMb: mb(/^nodejs_heap_size_total_bytes (\S+)$/m),
    newSpaceMb: mb(/^nodejs_heap_space_size_total_bytes\{space="new"\} (\S+)$/m),
  };
}

/**
 * The operator's /metrics. A few tries: while it writes a heap snapshot its event loop is
 * stopped for seconds, and once it runs again its HTTP server closes the kept-alive socket the
 * last request used just as fetch reuses it (ECONNRESET); a new connection is answered.
 */
async function metricsText(port: number): Promise<string> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    } catch (err) {
      if (attempt >= 5) throw err;
      await sleep(500);
    }
  }
}

/**
 * Asks the operator for a heap snapshot and summarises it: the live heap in MB after V8's
 * collection, and its largest groups. The operator answers /metrics again once it is written.
 */
async function liveHeap(
  pid: number,
  port: number,
  dir: string,
): Promise<{ totalMb: number; groups: HeapGroup[] }> {
  const before = new Set((await readdir(dir)).filter((f) => f.endsWith('.heapsnapshot')));
  process.kill(pid, 'SIGUSR2');
  let file: string | undefined;
  for (let i = 0; i < 600 && !file; i++) {
    await sleep(500);
    file = (await readdir(dir)).find((f) => f.endsWith('.heapsnapshot') && !before.has(f));
  }
  if (!file) throw new Error('no heap snapshot within 5 minutes');
  await metricsText(port);
  const { totalBytes, groups } = await summariseHeap(join(dir, file));
  // Kept for a closer look (a dominator tree in DevTools) when asked.
  const keep = process.env.MOORING_BENCH_KEEP_SNAPSHOTS;
  if (keep) await copyFile(join(dir, file), join(keep, file));
  await rm(join(dir, file), { force: true });
  return { totalMb: totalBytes / 1024 / 1024, groups };
}

/** RSS, and its split into anonymous memory (heaps, buffers) and pages of files (the node binary's code). */
async function rssPartsMb(pid: number): Promise<{ total: number; anon: number; file: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return {
    total: kb('VmRSS') / 1024,
    anon: kb('RssAnon') / 1024,
    file: (kb('RssFile') + kb('RssShmem')) / 1024,
  };
}

async function rssMb(pid: number): Promise<number> {
  return (await rssPartsMb(pid)).total;
}

type Ks = KubeObject & {
  status?: { conditions?: { type: string; status: string }[]; lastHandledReconcileAt?: string };
};

async function waitAll(
  client: KubeClient,
  namespace: string,
  done: (k: Ks) => boolean,
  what: string,
): Promise<number> {
  const started = Date.now();
  for (;;) {
    const list = await client.list<Ks>(KUSTOMIZE_API_VERSION, 'Kustomization', { namespace });
    const count = list.items.filter(done).length;
    if (count === N) return Date.now() - started;
    if (Date.now() - started > 20 * 60_000) throw new Error(`${what}: only ${count}/${N} after 20 minutes`);
    await sleep(500);
  }
}

// The side-by-side bench's plane: with workloads (so `wait` has Deployments to judge), KCM's limit
// raised to 200, so the tool and not KCM is measured.
const plane = await up(locationAt(join(repoRoot, '.mooring/bench-flux-plane-kcm200')), log, {
  workloads: true,
  kcmQps: 200,
});
const client = await KubeClient.fromKubeconfig(plane.kubeconfig, { qps: 500, burst: 1000 });
const git = await GitServer.start();
const { appDir } = await bundleOperators();
const namespace = uniqueName('noop');
await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
// flux-benchmark's tenant: every Kustomization applies as this ServiceAccount, bound to `admin`.
await client.create({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'tenant', namespace } });
await client.create({
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'RoleBinding',
  metadata: { name: 'tenant-admin', namespace },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin' },
  subjects: [{ kind: 'ServiceAccount', name: 'tenant', namespace }],
} as KubeObject);
const storage = await mkdtemp(join(tmpdir(), 'mooring-bench-'));
const metrics = await freePort();
let proc: ChildProcess | undefined;
try {
  const repo = await git.createRepo(namespace);
  await repo.commit({ 'app/manifests.yaml': manifests });
  proc = spawn(
    process.execPath,
    [
      // A heap snapshot on SIGUSR2: V8 collects garbage before it writes one, so its size is the
      // live heap, which tells a leak from garbage not yet collected.
      '--heapsnapshot-signal=SIGUSR2',
      `--diagnostic-dir=${storage}`,
      join(appDir, 'dist/all-in-one.mjs'),
      '--only',
      'source,kustomize',
      '--kubeconfig',
      plane.kubeconfig,
      '--watch-namespace',
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
      'error',
    ],
    // As the image runs it (its environment), so the memory figures are a cluster's.
    { cwd: repoRoot, env: bundleEnv(), stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const pid = proc.pid!;
  for (let i = 0; ; i++) {
    if (
      await fetch(`http://127.0.0.1:${metrics}/metrics`).then(
        (r) => r.ok,
        () => false,
      )
    )
      break;
    if (i > 600) throw new Error('the operator did not answer on /metrics within 2 minutes');
    await sleep(200);
  }
  await sleep(5000);
  const idleParts = await rssPartsMb(pid);
  const idleRss = idleParts.total;
  const idleCpu = await cpuSecondsOf(pid);
  const idleCommitted = await heapStats(metrics);
  await client.create({
    apiVersion: SOURCE_API_VERSION,
    kind: 'GitRepository',
    metadata: { name: 'bench', namespace },
    spec: { url: repo.url, interval: '60m', ref: { branch: 'main' } },
  } as KubeObject);
  for (let i = 0; i < N; i += 50)
    await Promise.all(
      Array.from({ length: Math.min(50, N - i) }, (_, j) =>
        client.create({
          apiVersion: KUSTOMIZE_API_VERSION,
          kind: 'Kustomization',
          metadata: { name: `ks-${i + j}`, namespace },
          spec: {
            interval: '60m',
            prune: true,
            wait: true,
            timeout: '1m',
            serviceAccountName: 'tenant',
            path: './app',
            namePrefix: `ks-${i + j}-`,
            sourceRef: { kind: 'GitRepository', name: 'bench' },
          },
        } as KubeObject),
      ),
    );
  const convergeMs = await waitAll(
    client,
    namespace,
    (k) => Boolean(k.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')),
    'convergence',
  );
  const convergeCpu = (await cpuSecondsOf(pid)) - idleCpu;
  await sleep(5000);
  const convergedParts = await rssPartsMb(pid);
  const convergedRss = convergedParts.total;
  const convergedCommitted = await heapStats(metrics);
  const convergedHeap = convergedCommitted.usedMb;
  // The same a while later, with nothing to do: whether V8 gives back what convergence made it grow
  // (its memory reducer runs some seconds after the last full collection). The figure above stays
  // the one the target is judged on.
  await sleep(SETTLE_MS);
  const settledRss = await rssMb(pid);
  const settledCommitted = await heapStats(metrics);
  const convergedLive = await liveHeap(pid, metrics, storage);
  // Writing a snapshot costs the process native memory that V8 and glibc keep, so the passes'
  // RSS starts from here, not from convergedRss.
  const afterSnapshotRss = await rssMb(pid);
  log(
    `${N} converged in ${(convergeMs / 1000).toFixed(1)} s (${convergeCpu.toFixed(1)} CPU s); RSS idle ${idleRss.toFixed(0)} MB, converged ${convergedRss.toFixed(0)} MB (anonymous ${idleParts.anon.toFixed(0)} -> ${convergedParts.anon.toFixed(0)} MB, files ${idleParts.file.toFixed(0)} -> ${convergedParts.file.toFixed(0)} MB)`,
  );

  const passes: {
    ms: number;
    byVerb: Map<string, number>;
    renders: number;
    hits: number;
    rss: number;
    heap: number;
  }[] = [];
  for (let p = 1; p <= PASSES; p++) {
    const token = `noop-${process.pid}-${p}`;
    const verbsBefore = await sumsBy(metrics, 'mooring_api_request_duration_seconds_count', 'verb');
    const cacheBefore = await sumsBy(metrics, 'mooring_render_cache_requests_total', 'result');
    const t0 = Date.now();
    for (let i = 0; i < N; i += 50)
      await Promise.all(
        Array.from({ length: Math.min(50, N - i) }, (_, j) =>
          client.mergePatch(
            { apiVersion: KUSTOMIZE_API_VERSION, kind: 'Kustomization', namespace, name: `ks-${i + j}` },
            { metadata: { annotations: { [RECONCILE_REQUESTED_AT_ANNOTATION]: token } } },
          ),
        ),
      );
    await waitAll(client, namespace, (k) => k.status?.lastHandledReconcileAt === token, `pass ${p}`);
    const ms = Date.now() - t0;
    // Let the last status writes and health reads land before counting.
    await sleep(3000);
    const byVerb = minus(
      await sumsBy(metrics, 'mooring_api_request_duration_seconds_count', 'verb'),
      verbsBefore,
    );
    const cache = minus(await sumsBy(metrics, 'mooring_render_cache_requests_total', 'result'), cacheBefore);
    const rss = await rssMb(pid);
    const heap = (await heapStats(metrics)).usedMb;
    passes.push({ ms, byVerb, renders: cache.get('miss') ?? 0, hits: cache.get('hit') ?? 0, rss, heap });
    log(
      `pass ${p}: ${(ms / 1000).toFixed(1)} s, ${(total(byVerb) / N).toFixed(2)} requests per Kustomization (${[...byVerb].map(([v, c]) => `${v} ${c}`).join(', ')}), ${cache.get('miss') ?? 0} renders, RSS ${rss.toFixed(0)} MB, heap ${heap.toFixed(0)} MB`,
    );
  }

  const finalLive = await liveHeap(pid, metrics, storage);
  log(
    `live heap after a collection: ${convergedLive.totalMb.toFixed(1)} MB converged, ${finalLive.totalMb.toFixed(1)} MB after ${PASSES} passes`,
  );
  const perKs = (x: number) => (x / N).toFixed(2);
  const verbs = (m: Map<string, number>) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .map(([v, c]) => `${v} ${perKs(c)}`)
      .join(', ');
  const tracked = N * OBJECTS_EACH + N + 1;
  console.log(`## Forced no-op reconciles and memory at ${N.toLocaleString('en')} Kustomizations (issue #21)

What: ${N} Kustomizations, each applying 4 objects (ServiceAccount, ConfigMap, Service, Deployment with 0
replicas) from one GitRepository with Flux's benchmark's \`wait: true\`, \`timeout: 1m\` and
\`serviceAccountName\` (bound to \`admin\`), converge on the all-in-one bundle (\`--only source,kustomize\`,
\`--concurrent 20\`, client limit 1000/2000, with the image's environment: ${Object.entries(
    BUNDLE_RUNTIME_ENV,
  )
    .map(([k, v]) => `\`${k}=${v}\``)
    .join(', ')}) against a control plane with workloads
(kube-controller-manager at 200 QPS rolls the Deployments out). Then, ${PASSES} times, every
Kustomization gets a new \`${RECONCILE_REQUESTED_AT_ANNOTATION}\` with nothing new in Git and nothing
drifted; a pass ends when every \`status.lastHandledReconcileAt\` carries its value (3 s more are
allowed for the last writes). Requests are the operator's own (\`mooring_api_request_duration_seconds_count\`),
renders the render cache's misses. Node ${process.version}, 2 CPUs, load average ${loadavg()[0]!.toFixed(2)} at the end.

| pass | wall time | API requests per Kustomization | by verb, per Kustomization | renders | render cache hits | RSS after | V8 heap used after |
| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: |
${passes
  .map(
    (p, i) =>
      `| ${i + 1} | ${(p.ms / 1000).toFixed(1)} s | ${perKs(total(p.byVerb))} | ${verbs(p.byVerb)} | ${p.renders} | ${p.hits} | ${p.rss.toFixed(0)} MB | ${p.heap.toFixed(0)} MB |`,
  )
  .join('\n')}

Memory: ${idleRss.toFixed(0)} MB idle (the process up, watching an empty namespace), ${convergedRss.toFixed(0)} MB
converged (V8 heap used ${convergedHeap.toFixed(0)} MB), tracking ${tracked.toLocaleString('en')} objects (the applied objects, the Kustomizations and the
source): ${(((convergedRss - idleRss) * 1000) / tracked).toFixed(1)} MB per 1,000 tracked objects. V8 had committed
${idleCommitted.totalMb.toFixed(0)} MB idle (${idleCommitted.newSpaceMb.toFixed(0)} MB of it the young generation) and ${convergedCommitted.totalMb.toFixed(0)} MB converged
(${convergedCommitted.newSpaceMb.toFixed(0)} MB young): the rest of the RSS is native (code, buffers, glibc's arenas).
Of the RSS, anonymous memory went from ${idleParts.anon.toFixed(0)} to ${convergedParts.anon.toFixed(0)} MB and pages of files (the node binary's
code as it is first run) from ${idleParts.file.toFixed(0)} to ${convergedParts.file.toFixed(0)} MB; the figure above counts both.
${SETTLE_MS / 1000} s later, with nothing to do, RSS was ${settledRss.toFixed(0)} MB (${(((settledRss - idleRss) * 1000) / tracked).toFixed(1)} MB per 1,000
tracked objects) and V8 had committed ${settledCommitted.totalMb.toFixed(0)} MB (${settledCommitted.newSpaceMb.toFixed(0)} MB young). The live heap
(a heap snapshot, which V8 takes after a full collection) was ${convergedLive.totalMb.toFixed(1)} MB converged and
${finalLive.totalMb.toFixed(1)} MB after the ${PASSES} passes; writing the converged snapshot took the
process from ${convergedRss.toFixed(0)} to ${afterSnapshotRss.toFixed(0)} MB of RSS, which V8 and glibc keep, so the "RSS after" column
starts there: read it for growth from pass to pass. Its largest groups converged (own sizes, by constructor):
${convergedLive.groups
  .slice(0, 8)
  .map((g) => `${g.name} ${(g.selfBytes / 1024 / 1024).toFixed(1)} MB (${g.count.toLocaleString('en')})`)
  .join('; ')}. Targets: at most
2 requests and no render per no-op reconcile; at most 16 MB per 1,000 tracked objects; no growth
over repeated passes.

Reproduce: \`npm run bench -- noop-passes\` (\`MOORING_BENCH_SIZE\`, \`MOORING_BENCH_PASSES\`).`);
} finally {
  proc?.kill('SIGTERM');
  if (proc && proc.exitCode === null) await new Promise((r) => proc!.once('exit', r));
  await rm(storage, { recursive: true, force: true });
  await git.close();
  // The operator is gone, so its finalizers come off by hand before the namespace goes.
  const list = await client
    .list<Ks>(KUSTOMIZE_API_VERSION, 'Kustomization', { namespace })
    .catch(() => ({ items: [] as Ks[] }));
  for (let i = 0; i < list.items.length; i += 50)
    await Promise.all(
      list.items
        .slice(i, i + 50)
        .map((k) =>
          client
            .mergePatch(
              { apiVersion: KUSTOMIZE_API_VERSION, kind: 'Kustomization', namespace, name: k.metadata.name! },
              { metadata: { finalizers: null } },
            )
            .catch(() => undefined),
        ),
    );
  await removeNamespace(client, namespace, [
    `/apis/${KUSTOMIZE_API_VERSION}/namespaces/${namespace}/kustomizations`,
    `/apis/${SOURCE_API_VERSION}/namespaces/${namespace}/gitrepositories`,
    `/api/v1/namespaces/${namespace}/configmaps`,
    `/api/v1/namespaces/${namespace}/serviceaccounts`,
    `/api/v1/namespaces/${namespace}/services`,
    `/apis/apps/v1/namespaces/${namespace}/deployments`,
    `/apis/apps/v1/namespaces/${namespace}/replicasets`,
    `/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}/rolebindings`,
  ]);
  client.close();
}
