// The floor of flux-benchmark's shape: a process that does only the writes any tool must make for a
// Kustomization to be applied and reported Ready, and nothing a real tool adds for safety. Per
// source, one status write (Ready, with an artifact); per Kustomization, a server-side apply of each
// of its four objects as the impersonated ServiceAccount, a wait for the Deployment to be healthy
// (kstatus Current, from a watch, no polling), and one status write (Ready, with the inventory).
// No finalizers, no dry runs, no inventory written before the apply, no events, no reads. It is not
// a product: it is what flux-side-by-side runs as `floor` to show how much of a run's time the
// control plane spends on work no tool can leave out, on the same machine, in the same run.
//
//   node --import tsx floor-tool.ts <kubeconfig> <namespace> <concurrent> <qps> <burst> <metricsPort>
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { KUSTOMIZE_API_VERSION, SOURCE_API_VERSION } from '@mooring/api';
import { computeStatus, type LiveObject } from '@mooring/kstatus';
import { Informer, KubeClient, type KubeObject } from '@mooring/runtime';
import { parseAllDocuments } from 'yaml';
import { substituteVariables } from '../src/substitute.ts';

const [kubeconfig, namespace, concurrentArg, qps, burst, metricsPort] = process.argv.slice(2);
if (!kubeconfig || !namespace || !metricsPort)
  throw new Error('usage: floor-tool.ts <kubeconfig> <namespace> …');
const concurrent = Number(concurrentArg);
const FIELD_MANAGER = 'floor';
const SERVICE_ACCOUNT = `system:serviceaccount:${namespace}:flux`;

const client = await KubeClient.fromKubeconfig(kubeconfig, { qps: Number(qps), burst: Number(burst) });
let requests = 0;
const counted = <T>(request: Promise<T>): Promise<T> => {
  requests++;
  return request;
};

// The artifact's one file, its variables substituted per Kustomization by Mooring's postBuild.
const manifests = parseAllDocuments(
  readFileSync(join(import.meta.dirname, 'testdata/flux-benchmark/podinfo/podinfo.yaml'), 'utf8'),
)
  .map((doc) => doc.toJS() as KubeObject | null)
  .filter((o): o is KubeObject => !!o);
function render(vars: Record<string, string>): KubeObject[] {
  return manifests.map((o) => {
    const done = substituteVariables(o, vars, { strict: false, strategy: 'Always' }, o.metadata.name ?? '');
    return { ...done, metadata: { ...done.metadata, namespace } };
  });
}

const ready = (reason: string, message: string) => [
  { type: 'Ready', status: 'True', reason, message, lastTransitionTime: new Date().toISOString() },
];

// Deployments healthy, from one watch; waiters are woken by its events.
const healthy = new Set<string>();
const waiters = new Map<string, () => void>();
const deployments = new Informer(client, { apiVersion: 'apps/v1', kind: 'Deployment', namespace });
deployments.on(({ object }) => {
  if (computeStatus(object as unknown as LiveObject).status !== 'Current') return;
  const name = object.metadata.name ?? '';
  healthy.add(name);
  waiters.get(name)?.();
});
const untilHealthy = (name: string) =>
  healthy.has(name) ? Promise.resolve() : new Promise<void>((resolve) => waiters.set(name, resolve));

// Work in the order the watches deliver it, `concurrent` at a time.
const queue: (() => Promise<void>)[] = [];
let running = 0;
function enqueue(job: () => Promise<void>): void {
  queue.push(job);
  pump();
}
function pump(): void {
  while (running < concurrent && queue.length > 0) {
    const job = queue.shift()!;
    running++;
    job()
      .catch((err: unknown) => process.stderr.write(`floor: ${String(err)}\n`))
      .finally(() => {
        running--;
        pump();
      });
  }
}

/** Writes the object's status, Ready True with `status`: each kind's one write. */
function writeReady(apiVersion: string, kind: string, name: string, status: Record<string, unknown>) {
  return counted(
    client.applyStatus({ apiVersion, kind, metadata: { name, namespace }, status } as KubeObject, {
      fieldManager: FIELD_MANAGER,
      force: true,
    }),
  );
}

async function reconcileSource(source: KubeObject): Promise<void> {
  const name = source.metadata.name ?? '';
  await writeReady(SOURCE_API_VERSION, 'OCIRepository', name, {
    observedGeneration: 1,
    conditions: ready('Succeeded', 'stored artifact for digest latest@sha256:0'),
    artifact: {
      path: `ocirepository/${namespace}/${name}/0.tar.gz`,
      url: `http://127.0.0.1/ocirepository/${namespace}/${name}/0.tar.gz`,
      revision: 'latest@sha256:0',
      digest: 'sha256:0',
      lastUpdateTime: new Date().toISOString(),
    },
  });
}

async function reconcileKustomization(ks: KubeObject): Promise<void> {
  const name = ks.metadata.name ?? '';
  const spec = (ks as KubeObject & { spec: { postBuild: { substitute: Record<string, string> } } }).spec;
  const objects = render(spec.postBuild.substitute);
  await Promise.all(
    objects.map((o) =>
      counted(
        client.apply(o, { fieldManager: FIELD_MANAGER, force: true, impersonate: { user: SERVICE_ACCOUNT } }),
      ),
    ),
  );
  const deployment = objects.find((o) => o.kind === 'Deployment')?.metadata.name ?? '';
  await untilHealthy(deployment);
  await writeReady(KUSTOMIZE_API_VERSION, 'Kustomization', name, {
    observedGeneration: 1,
    lastAppliedRevision: 'latest@sha256:0',
    conditions: ready('ReconciliationSucceeded', 'Applied revision: latest@sha256:0'),
    inventory: {
      entries: objects.map((o) => ({
        id: `${namespace}_${o.metadata.name}_${o.apiVersion.includes('/') ? o.apiVersion.split('/')[0] : ''}_${o.kind}`,
        v: o.apiVersion.split('/').pop(),
      })),
    },
  });
}

const sources = new Informer(client, { apiVersion: SOURCE_API_VERSION, kind: 'OCIRepository', namespace });
sources.on(({ type, object }) => {
  if (type === 'added') enqueue(() => reconcileSource(object));
});
const kustomizations = new Informer(client, {
  apiVersion: KUSTOMIZE_API_VERSION,
  kind: 'Kustomization',
  namespace,
});
kustomizations.on(({ type, object }) => {
  if (type === 'added') enqueue(() => reconcileKustomization(object));
});
await Promise.all([deployments.start(), sources.start(), kustomizations.start()]);

// The bench reads every tool's requests from its metrics; this one's, its informers' lists and
// watches included, are counted the same way.
createServer((_, res) => {
  const informerRequests = [deployments, sources, kustomizations].reduce(
    (sum, i) => sum + i.stats.lists + i.stats.watches,
    0,
  );
  res.end(`floor_requests_total ${requests + informerRequests}\n`);
}).listen(Number(metricsPort), '127.0.0.1');
process.on('SIGTERM', () => process.exit(0));
