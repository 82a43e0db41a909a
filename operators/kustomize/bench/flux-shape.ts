// What the benches in Flux's benchmark shape share (flux-side-by-side, sharding): the objects of
// fluxcd/flux-benchmark, its artifact pushed once, and each process's CPU, peak RSS and API requests.
import { type ChildProcess, execFileSync } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { KUSTOMIZE_API_VERSION, SOURCE_API_VERSION } from '@mooring/api';
import { ApiError, Informer, type KubeClient, type KubeObject } from '@mooring/runtime';
import type { TestRegistry } from '@mooring/test/harness';
import { pushArtifact } from '../../../cli/src/oci-push.ts';

export const FLUX_SOURCE = 'source.toolkit.fluxcd.io/v1';
export const FLUX_KUSTOMIZE = 'kustomize.toolkit.fluxcd.io/v1';

/** `floor` uses Mooring's kinds: see floor-tool.ts. */
export type Tool = 'mooring' | 'flux' | 'floor';

export interface Started {
  procs: ChildProcess[];
  metricsPorts: number[];
  /** The metric whose counts are the process's API requests. */
  requestMetric: string;
  storage: string;
}

export async function waitHttp(url: string, what: string, proc: ChildProcess): Promise<void> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`${what} exited (${proc.exitCode}) before answering ${url}`);
    try {
      const res = await fetch(url);
      await res.arrayBuffer();
      if (res.ok) return;
    } catch {}
    if (Date.now() > deadline) throw new Error(`${what} did not answer ${url} within 2 minutes`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

export function logTo(proc: ChildProcess, file: string): void {
  // The controllers' logs go to a file, so a failed run can be read afterwards.
  const out = createWriteStream(file);
  proc.stdout?.pipe(out);
  proc.stderr?.pipe(out);
}

export async function requestsOf(started: Started): Promise<number> {
  let total = 0;
  for (const port of started.metricsPorts) {
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    for (const line of text.split('\n')) {
      if (line.startsWith(started.requestMetric)) total += Number(line.split(' ').pop());
    }
  }
  return total;
}

/** Sums of a metric's samples by one label (e.g. requests by verb), over the tool's processes. */
export async function sumsBy(started: Started, metric: string, label: string): Promise<Map<string, number>> {
  const sums = new Map<string, number>();
  const pattern = new RegExp(`^${metric}\\{(.*)\\} (\\S+)$`);
  for (const port of started.metricsPorts) {
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    for (const line of text.split('\n')) {
      const m = pattern.exec(line);
      const value = m ? new RegExp(`${label}="([^"]*)"`).exec(m[1]!)?.[1] : undefined;
      if (m && value !== undefined) sums.set(value, (sums.get(value) ?? 0) + Number(m[2]));
    }
  }
  return sums;
}

const TICKS_PER_SECOND = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

export async function cpuSecondsOf(pid: number): Promise<number> {
  // /proc/<pid>/stat: utime and stime are fields 14 and 15, counted after the ")" of the name.
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

/**
 * CPU seconds of every process started for the control plane in `dir` (their arguments name it),
 * the tool's own processes excepted: Mooring's `--kubeconfig` names the directory too.
 */
export async function planeCpuSecondsOf(dir: string, exclude: number[]): Promise<number> {
  let total = 0;
  for (const seconds of (await planeCpuByProcess(dir, exclude)).values()) total += seconds;
  return total;
}

export async function peakRssKbOf(pid: number): Promise<number> {
  const m = /VmHWM:\s+(\d+)/.exec(await readFile(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : 0;
}

export async function stop(started: Started): Promise<void> {
  await Promise.all(
    started.procs.map(async (p) => {
      if (p.exitCode !== null) return;
      p.kill('SIGTERM');
      await new Promise((r) => p.once('exit', r));
    }),
  );
  await rm(started.storage, { recursive: true, force: true });
}

/** flux-benchmark's objects: a ServiceAccount bound to admin, then N sources and N Kustomizations. */
export function benchObjects(
  tool: Tool,
  namespace: string,
  n: number,
  url: string,
  labelsOf: (index: number) => Record<string, string> | undefined = () => undefined,
): KubeObject[][] {
  const sourceVersion = tool === 'flux' ? FLUX_SOURCE : SOURCE_API_VERSION;
  const kustomizeVersion = tool === 'flux' ? FLUX_KUSTOMIZE : KUSTOMIZE_API_VERSION;
  const sources: KubeObject[] = [];
  const kustomizations: KubeObject[] = [];
  for (let i = 0; i < n; i++) {
    const name = `bench-${i}`;
    const labels = labelsOf(i);
    sources.push({
      apiVersion: sourceVersion,
      kind: 'OCIRepository',
      metadata: { name, namespace, ...(labels && { labels }) },
      spec: { interval: '60m', insecure: true, url, ref: { tag: 'latest' } },
    } as KubeObject);
    kustomizations.push({
      apiVersion: kustomizeVersion,
      kind: 'Kustomization',
      metadata: { name, namespace, ...(labels && { labels }) },
      spec: {
        sourceRef: { kind: 'OCIRepository', name },
        interval: '60m',
        retryInterval: '2m',
        path: './',
        prune: true,
        wait: true,
        timeout: '1m',
        serviceAccountName: 'flux',
        targetNamespace: namespace,
        postBuild: { substitute: { INDEX: `${i}app`, PODS: '0', MCPU: '1m' } },
      },
    } as KubeObject);
  }
  return [sources, kustomizations];
}

/** The run's namespace and the ServiceAccount its Kustomizations impersonate, bound to `admin`. */
export async function createBenchNamespace(client: KubeClient, namespace: string): Promise<void> {
  await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  await client.create({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'flux', namespace } });
  await client.create({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: 'flux-admin', namespace },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin' },
    subjects: [{ kind: 'ServiceAccount', name: 'flux', namespace }],
  } as KubeObject);
}

export async function createAll(client: KubeClient, objects: KubeObject[]): Promise<void> {
  for (let i = 0; i < objects.length; i += 50) {
    await Promise.all(objects.slice(i, i + 50).map((o) => client.create(o)));
  }
}

export type WithReady = KubeObject & { status?: { conditions?: { type: string; status: string }[] } };

export const isReady = (k: WithReady) =>
  !!k.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');

/**
 * The run's Kustomizations from one watch, each reduced to its labels and Ready condition. Polling
 * a LIST of them instead (every 250 ms, as this bench once did) cost the API server a quarter of a
 * LIST of all 1000 per Kustomization, work done for neither tool, on the cores they share.
 */
export function readyWatch(client: KubeClient, tool: Tool, namespace: string): Informer<WithReady> {
  return new Informer<WithReady>(client, {
    apiVersion: tool === 'flux' ? FLUX_KUSTOMIZE : KUSTOMIZE_API_VERSION,
    kind: 'Kustomization',
    namespace,
    transform: (obj) => {
      const o = obj as WithReady;
      const ready = o.status?.conditions?.find((c) => c.type === 'Ready');
      return {
        apiVersion: o.apiVersion,
        kind: o.kind,
        metadata: { name: o.metadata.name, namespace: o.metadata.namespace, labels: o.metadata.labels },
        status: { conditions: ready ? [{ type: 'Ready', status: ready.status }] : [] },
      } as WithReady;
    },
  });
}

/** Removes a run's namespace; the controllers are gone, so their finalizers are dropped by hand. */
export async function cleanUp(client: KubeClient, tool: Tool, namespace: string): Promise<void> {
  const kinds: [string, string][] =
    tool === 'flux'
      ? [
          [FLUX_KUSTOMIZE, 'Kustomization'],
          [FLUX_SOURCE, 'OCIRepository'],
        ]
      : [
          [KUSTOMIZE_API_VERSION, 'Kustomization'],
          [SOURCE_API_VERSION, 'OCIRepository'],
        ];
  for (const [apiVersion, kind] of kinds) {
    const list = await client.list<KubeObject>(apiVersion, kind, { namespace });
    for (let i = 0; i < list.items.length; i += 50) {
      await Promise.all(
        list.items
          .slice(i, i + 50)
          .map((o) =>
            client
              .mergePatch(
                { apiVersion, kind, namespace, name: o.metadata.name ?? '' },
                { metadata: { finalizers: null } },
              )
              .catch(() => {}),
          ),
      );
    }
  }
  await client.delete({ apiVersion: 'v1', kind: 'Namespace', name: namespace }).catch(() => {});
  // kube-controller-manager empties the namespace: thousands of deletes. Until it has, the next
  // run (the other tool's) would share the control plane with them.
  const deadline = Date.now() + 15 * 60_000;
  while (Date.now() < deadline) {
    const gone = await client.get({ apiVersion: 'v1', kind: 'Namespace', name: namespace }).then(
      () => false,
      (err: unknown) => err instanceof ApiError && err.isNotFound,
    );
    if (gone) return;
    await new Promise((r) => setTimeout(r, 1000));
  }
  process.stderr.write(`bench: namespace ${namespace} still there after 15 minutes\n`);
}

export async function pushBenchArtifact(registry: TestRegistry, dir: string): Promise<string> {
  const url = `oci://${registry.host}/flux-benchmark/podinfo:latest`;
  // pushArtifact reports on stdout, as the CLI does; here stdout is the Markdown section.
  const write = process.stdout.write;
  process.stdout.write = process.stderr.write.bind(process.stderr) as typeof process.stdout.write;
  try {
    await pushArtifact(
      url,
      {
        path: dir,
        source: 'https://github.com/fluxcd/flux-benchmark',
        revision: 'main@sha1:e09c533',
        insecureRegistry: true,
        reproducible: true,
      },
      () => {},
    );
  } finally {
    process.stdout.write = write;
  }
  return `oci://${registry.host}/flux-benchmark/podinfo`;
}

/**
 * The API server's own request counts (`apiserver_request_total`), every client's together, by
 * verb, resource and subresource, dry runs apart: what the control plane was asked to do.
 */
export async function apiServerRequests(client: KubeClient): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for await (const line of client.streamLines('/metrics')) {
    if (!line.startsWith('apiserver_request_total{')) continue;
    const label = (name: string) => new RegExp(`[{,]${name}="([^"]*)"`).exec(line)?.[1] ?? '';
    const sub = label('subresource');
    const key = `${label('verb')}${label('dry_run') ? ' (dry run)' : ''} ${label('resource')}${sub ? `/${sub}` : ''}`;
    counts.set(key, (counts.get(key) ?? 0) + Number(line.split(' ').pop()));
  }
  return counts;
}

/** CPU seconds of the control plane's processes in `dir`, by executable name, `exclude` excepted. */
export async function planeCpuByProcess(dir: string, exclude: number[]): Promise<Map<string, number>> {
  const { readdir } = await import('node:fs/promises');
  const byName = new Map<string, number>();
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid) || exclude.includes(Number(pid))) continue;
    try {
      const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8');
      if (!cmdline.includes(dir)) continue;
      const name = cmdline.split('\0')[0]!.split('/').pop()!;
      byName.set(name, (byName.get(name) ?? 0) + (await cpuSecondsOf(Number(pid))));
    } catch {}
  }
  return byName;
}

/** `after - before` per key, largest first, as "key count/n" for a log line. */
export function perKustomization(before: Map<string, number>, after: Map<string, number>, n: number): string {
  return [...after]
    .map(([key, value]) => [key, value - (before.get(key) ?? 0)] as const)
    .filter(([, d]) => d / n >= 0.01)
    .sort((a, b) => b[1] - a[1])
    .map(([key, d]) => `${key} ${(d / n).toFixed(3)}`)
    .join(', ');
}
