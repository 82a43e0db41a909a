// `npm run demo`: the GitOps loop on the local control plane, end to end. A platform team keeps a
// model-serving stack in Git; Mooring's operators (source, kustomize, notification) run in this
// process against the real API server; every step is a commit or a kubectl edit, and the demo
// measures how long Mooring takes to make the cluster match Git again.
import { createHmac, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import { KUSTOMIZE_API_VERSION, NOTIFICATION_API_VERSION, SOURCE_API_VERSION } from '@mooring/api';
import { kustomizeOperator } from '@mooring/kustomize-operator';
import { notificationOperator } from '@mooring/notification-operator';
import { KubeClient, type KubeObject, parseOperatorOptions, runOperators } from '@mooring/runtime';
import { sourceOperator } from '@mooring/source-operator';
import { GitServer } from '@mooring/test/harness';
import { repoRoot } from './lib/control-plane.ts';

const { values } = parseArgs({ options: { kubeconfig: { type: 'string' }, workloads: { type: 'boolean' } } });
const kubeconfig = values.kubeconfig!;
const client = await KubeClient.fromKubeconfig(kubeconfig);
const NS = 'mooring-demo';
const APP_NS = 'models';
const say = (line = '') => console.log(line);
const step = (n: number, title: string) => say(`\n${n}. ${title}`);

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

async function until<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 120_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const stack = (
  modelVersion: string,
  replicas: number,
  withCanary: boolean,
): Record<string, string | null> => ({
  'clusters/demo/kustomization.yaml': `namespace: ${APP_NS}
resources:
  - namespace.yaml
  - sentiment-api.yaml
${withCanary ? '  - canary.yaml\n' : ''}configMapGenerator:
  - name: model-config
    literals:
      - MODEL_VERSION=${modelVersion}
      - MAX_BATCH=32
`,
  'clusters/demo/namespace.yaml': `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${APP_NS}\n`,
  'clusters/demo/sentiment-api.yaml': `apiVersion: apps/v1
kind: Deployment
metadata:
  name: sentiment-api
  labels: {app: sentiment-api}
spec:
  replicas: ${replicas}
  selector:
    matchLabels: {app: sentiment-api}
  template:
    metadata:
      labels: {app: sentiment-api}
    spec:
      containers:
        - name: server
          image: ghcr.io/acme/sentiment-server:${modelVersion}
          envFrom:
            - configMapRef: {name: model-config}
          ports: [{containerPort: 8080}]
---
apiVersion: v1
kind: Service
metadata:
  name: sentiment-api
spec:
  selector: {app: sentiment-api}
  ports: [{port: 80, targetPort: 8080}]
`,
  'clusters/demo/canary.yaml': withCanary
    ? `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: canary-traffic\ndata:\n  weight: "10"\n`
    : null,
});

type Ks = KubeObject & {
  status?: { lastAppliedRevision?: string; conditions?: { type: string; status: string; message: string }[] };
};
const ksKey = { apiVersion: KUSTOMIZE_API_VERSION, kind: 'Kustomization', namespace: NS, name: 'models' };
const appliedRevision = async (rev: string) => {
  const ks = await client.get<Ks>(ksKey);
  const ready = ks.status?.conditions?.find((c) => c.type === 'Ready');
  return ks.status?.lastAppliedRevision === rev && ready?.status === 'True' ? ks : undefined;
};

async function showWorkloads(): Promise<void> {
  const deploy = await client.get<
    KubeObject & {
      spec: { replicas: number; template: { spec: { containers: { image: string }[] } } };
      status?: { readyReplicas?: number };
    }
  >({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    namespace: APP_NS,
    name: 'sentiment-api',
  });
  const cm = (
    await client.list<KubeObject & { data?: Record<string, string> }>('v1', 'ConfigMap', {
      namespace: APP_NS,
    })
  ).items
    .filter((c) => c.metadata.name !== 'kube-root-ca.crt')
    .map(
      (c) => `${c.metadata.name}${c.data?.MODEL_VERSION ? ` (MODEL_VERSION=${c.data.MODEL_VERSION})` : ''}`,
    );
  const image = deploy.spec.template.spec.containers[0]?.image;
  const ready = deploy.status?.readyReplicas ?? 0;
  say(`   Deployment sentiment-api  image ${image}  ready ${ready}/${deploy.spec.replicas}`);
  say(`   ConfigMaps               ${cm.join(', ')}`);
}

const timings: [string, number][] = [];
const storage = await mkdtemp(join(tmpdir(), 'mooring-demo-'));
const git = await GitServer.start();
const receiverPort = await freePort();
const shutdown = new AbortController();
const options = parseOperatorOptions(
  [
    '--kubeconfig',
    kubeconfig,
    '--watch-namespace',
    NS,
    '--metrics-addr',
    '127.0.0.1:0',
    '--health-addr',
    '127.0.0.1:0',
    '--storage-path',
    storage,
    '--storage-addr',
    '127.0.0.1:0',
    '--receiver-addr',
    `127.0.0.1:${receiverPort}`,
    '--events-listen-addr',
    '127.0.0.1:0',
    '--log-level',
    'silent',
  ],
  {},
  {
    extraFlags: Object.assign(
      {},
      sourceOperator().extraFlags,
      kustomizeOperator().extraFlags,
      notificationOperator().extraFlags,
    ),
  },
);
let operators: Promise<number> | undefined;
try {
  const version = await client.request<{ gitVersion: string }>({ method: 'GET', path: '/version' });
  say(
    `Kubernetes ${version.gitVersion} is running locally${values.workloads ? ', with a scheduler and fake nodes (kwok)' : ''}.`,
  );
  // A previous run's objects carry Mooring's finalizer and no operator runs now to release it:
  // the demo owns these namespaces, so it releases them itself and starts from a clean slate.
  for (const [apiVersion, kind] of [
    [SOURCE_API_VERSION, 'GitRepository'],
    [KUSTOMIZE_API_VERSION, 'Kustomization'],
    [NOTIFICATION_API_VERSION, 'Receiver'],
  ] as const) {
    const left = await client
      .list(apiVersion, kind, { namespace: NS })
      .catch(() => ({ items: [] as KubeObject[] }));
    for (const o of left.items) {
      await client.mergePatch(
        { apiVersion, kind, namespace: NS, name: o.metadata.name! },
        { metadata: { finalizers: null } },
      );
    }
  }
  for (const name of [NS, APP_NS]) {
    await client.delete({ apiVersion: 'v1', kind: 'Namespace', name }).catch(() => {});
    await until(`the previous demo namespace ${name} to go`, async () =>
      (await client.getOrUndefined({ apiVersion: 'v1', kind: 'Namespace', name })) ? undefined : true,
    );
  }
  await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });

  step(1, 'A platform repository declares a model-serving stack (namespace, Deployment, Service, config).');
  const repo = await git.createRepo('platform');
  let commit = await repo.commit(stack('1.0.0', 2, true), 'sentiment model 1.0.0');
  say(`   pushed ${commit.slice(0, 7)} to ${repo.url}`);

  step(2, 'Mooring starts: source, kustomize and notification operators, one process.');
  await new Promise<void>((resolve, reject) => {
    operators = runOperators([sourceOperator(), kustomizeOperator(), notificationOperator()], options, {
      shutdown: shutdown.signal,
      onReady: () => resolve(),
    });
    operators.then(() => reject(new Error('the operators stopped early')), reject);
  });
  const token = randomBytes(16).toString('hex');
  const objects: KubeObject[] = [
    {
      apiVersion: SOURCE_API_VERSION,
      kind: 'GitRepository',
      metadata: { name: 'platform', namespace: NS },
      spec: { url: repo.url, interval: '30m', ref: { branch: 'main' } },
    } as KubeObject,
    {
      apiVersion: KUSTOMIZE_API_VERSION,
      kind: 'Kustomization',
      metadata: { name: 'models', namespace: NS },
      spec: {
        interval: '30m',
        prune: true,
        wait: !!values.workloads,
        timeout: '2m',
        path: './clusters/demo',
        sourceRef: { kind: 'GitRepository', name: 'platform' },
      },
    } as KubeObject,
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'webhook-token', namespace: NS },
      stringData: { token },
    } as KubeObject,
    {
      apiVersion: NOTIFICATION_API_VERSION,
      kind: 'Receiver',
      metadata: { name: 'platform-push', namespace: NS },
      spec: {
        type: 'github',
        events: ['push'],
        secretRef: { name: 'webhook-token' },
        resources: [{ apiVersion: SOURCE_API_VERSION, kind: 'GitRepository', name: 'platform' }],
      },
    } as KubeObject,
  ];
  let t0 = Date.now();
  for (const o of objects) await client.create(o);
  const first = await until('the first revision applied', () => appliedRevision(`main@sha1:${commit}`));
  timings.push([values.workloads ? 'first sync, pods Ready' : 'first sync', Date.now() - t0]);
  say(
    `   Kustomization models: ${first.status!.conditions!.find((c) => c.type === 'Ready')!.message} (${Date.now() - t0} ms)`,
  );
  await showWorkloads();

  step(3, 'Promote model 1.1.0 by commit; a signed GitHub webhook tells Mooring at once.');
  const path = await until('the receiver path', async () => {
    const r = await client.get<KubeObject & { status?: { webhookPath?: string } }>({
      apiVersion: NOTIFICATION_API_VERSION,
      kind: 'Receiver',
      namespace: NS,
      name: 'platform-push',
    });
    return r.status?.webhookPath;
  });
  commit = await repo.commit(stack('1.1.0', 2, true), 'sentiment model 1.1.0');
  t0 = Date.now();
  const body = JSON.stringify({
    ref: 'refs/heads/main',
    after: commit,
    repository: { full_name: 'acme/platform' },
  });
  const res = await fetch(`http://127.0.0.1:${receiverPort}${path}`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      'X-GitHub-Event': 'push',
      'X-Hub-Signature-256': `sha256=${createHmac('sha256', token).update(body).digest('hex')}`,
    },
    body,
  });
  say(`   webhook answered ${res.status}`);
  await until('the promotion applied', () => appliedRevision(`main@sha1:${commit}`));
  timings.push([values.workloads ? 'push → applied, pods Ready' : 'push → applied', Date.now() - t0]);
  say(`   applied main@sha1:${commit.slice(0, 7)} ${Date.now() - t0} ms after the push`);
  await showWorkloads();

  step(4, 'Someone edits the live config by hand; Mooring puts Git back.');
  const generated = (await client.list<KubeObject>('v1', 'ConfigMap', { namespace: APP_NS })).items.find(
    (c) => c.metadata.name?.startsWith('model-config'),
  )!;
  await client.mergePatch(
    { apiVersion: 'v1', kind: 'ConfigMap', namespace: APP_NS, name: generated.metadata.name! },
    { data: { MAX_BATCH: '4096' } },
  );
  say(`   patched ${generated.metadata.name} MAX_BATCH=4096 behind Git's back`);
  t0 = Date.now();
  await client.mergePatch(ksKey, {
    metadata: { annotations: { 'reconcile.mooring.dev/requestedAt': new Date().toISOString() } },
  });
  await until('the drift corrected', async () => {
    const cm = await client.get<KubeObject & { data?: Record<string, string> }>({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      namespace: APP_NS,
      name: generated.metadata.name!,
    });
    return cm.data?.MAX_BATCH === '32' ? true : undefined;
  });
  timings.push(['drift corrected', Date.now() - t0]);
  say(`   MAX_BATCH is 32 again after ${Date.now() - t0} ms (the next interval would do it unasked)`);

  step(5, 'The canary ends: its file leaves Git, and Mooring prunes it from the cluster.');
  commit = await repo.commit(stack('1.1.0', 2, false), 'end the canary');
  t0 = Date.now();
  await client.mergePatch(
    { apiVersion: SOURCE_API_VERSION, kind: 'GitRepository', namespace: NS, name: 'platform' },
    { metadata: { annotations: { 'reconcile.mooring.dev/requestedAt': new Date().toISOString() } } },
  );
  await until('the canary pruned', async () =>
    (await client.getOrUndefined({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      namespace: APP_NS,
      name: 'canary-traffic',
    }))
      ? undefined
      : true,
  );
  timings.push(['prune after commit', Date.now() - t0]);
  say(`   canary-traffic deleted ${Date.now() - t0} ms after the commit`);
  await showWorkloads();

  say('\nSummary (this machine, this run):');
  for (const [what, ms] of timings) say(`   ${what.padEnd(28)} ${ms} ms`);
  const kc = relative(process.cwd(), kubeconfig) || kubeconfig;
  say(`\nThe control plane keeps running with the stack applied (the operators stop with the demo). Try:`);
  say(`  export KUBECONFIG=${kc}`);
  say(`  ${relative(process.cwd(), `${repoRoot}/bin/kubectl`)} -n ${APP_NS} get deploy,svc,cm`);
  say(
    `  ${relative(process.cwd(), `${repoRoot}/bin/kubectl`)} -n ${NS} get gitrepositories,kustomizations,receivers`,
  );
  say(
    `  npm run operators -- --kubeconfig ${kc} --storage-path .mooring/storage   # run the operators yourself`,
  );
  say('  hack/control-plane down      # stop it and remove its data');
} finally {
  shutdown.abort();
  await operators?.catch(() => 1);
  await git.close();
  await rm(storage, { recursive: true, force: true });
  client.close();
}
