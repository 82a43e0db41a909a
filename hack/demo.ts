// `npm run demo`: the GitOps loop on the local control plane, end to end. A platform team keeps a
// model-serving stack in Git (`infra`, then `apps` with a `staging` overlay); Mooring's source,
// kustomize and notification operators run in this process against the real API server. Every
// step is a commit, a webhook or a kubectl-style edit, and the demo measures how long Mooring
// takes to make the cluster match Git again. Helm charts come next: a vendored agent chart and the
// team's own model-server chart, each a HelmRelease in Git, promoted by changing a value there.
// Last, a second local cluster joins and one KustomizationSet puts the same agent on both.
// `--once` exits after the walk-through; without it the
// operators keep reconciling (every namespace) under a live status table until Ctrl-C.
import { execFile } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import {
  HELM_API_VERSION,
  KUSTOMIZE_API_VERSION,
  NOTIFICATION_API_VERSION,
  SOURCE_API_VERSION,
} from '@mooring/api';
import { kustomizeOperator } from '@mooring/kustomize-operator';
import { notificationOperator } from '@mooring/notification-operator';
import { KubeClient, type KubeObject, parseOperatorOptions, runOperators } from '@mooring/runtime';
import { sourceOperator } from '@mooring/source-operator';
import { GitServer } from '@mooring/test/harness';
import { startUiServer, type UiServer } from '../cli/src/ui/ui-server.ts';
import {
  agentOn,
  clusterSecret,
  FLEET_FILES,
  FLEET_FINALIZED,
  FLEET_NS,
  fleetReady,
  fleetSet,
  startSecondCluster,
} from './demo-fleet.ts';
import { markLocalOperators } from './demo-marker.ts';
import { followStatus, STATUS_KINDS, statusRows, tableLines } from './demo-table.ts';
import { repoRoot } from './lib/control-plane.ts';

const { values } = parseArgs({
  options: { kubeconfig: { type: 'string' }, workloads: { type: 'boolean' }, once: { type: 'boolean' } },
});
const kubeconfig = values.kubeconfig!;
const client = await KubeClient.fromKubeconfig(kubeconfig);
const NS = 'mooring-demo';
const APP_NS = 'models';
/** Where the per-cluster agent (a Helm chart) runs. */
const AGENT_NS = 'monitoring';
/** How often the demo's GitRepository fetches: a plain `git push` is applied within this. */
const GIT_INTERVAL = '10s';
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
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * prometheus-node-exporter's chart, as vendored for the Helm tests (its SOURCE and LICENSE go
 * with it), under charts/node-exporter in the platform repository.
 */
const AGENT_CHART_DIR = join(repoRoot, 'shared/helm/test/testdata/public-charts/prometheus-node-exporter');
const AGENT_CHART: Record<string, string> = Object.fromEntries(
  readdirSync(AGENT_CHART_DIR, { recursive: true, encoding: 'utf8' })
    .filter((f) => statSync(join(AGENT_CHART_DIR, f)).isFile())
    .map((f) => [
      `charts/node-exporter/${f.replace(/^prometheus-node-exporter\//, '')}`,
      readFileSync(join(AGENT_CHART_DIR, f), 'utf8'),
    ]),
);

/** The platform team's own chart for a model server (hack/demo-charts/model-server), under charts/model-server. */
const MODEL_CHART_DIR = join(repoRoot, 'hack/demo-charts/model-server');
const MODEL_CHART: Record<string, string> = Object.fromEntries(
  readdirSync(MODEL_CHART_DIR, { recursive: true, encoding: 'utf8' })
    .filter((f) => statSync(join(MODEL_CHART_DIR, f)).isFile())
    .map((f) => [`charts/model-server/${f}`, readFileSync(join(MODEL_CHART_DIR, f), 'utf8')]),
);

/** What the translate model's HelmRelease sets in Git: promoting it is changing these values. */
interface ModelValues {
  version: string;
  replicas: number;
}

/** The translate model server: the team's chart, released into the models namespace with its values. */
function modelRelease(model: ModelValues): string {
  return `apiVersion: ${HELM_API_VERSION}
kind: HelmRelease
metadata:
  name: translate-api
  namespace: ${NS}
spec:
  interval: 1m
  releaseName: translate-api
  targetNamespace: ${APP_NS}
  chart:
    spec:
      chart: ./charts/model-server
      sourceRef:
        kind: GitRepository
        name: platform
  install:
    disableWait: ${!values.workloads}
  upgrade:
    disableWait: ${!values.workloads}
  values:
    model:
      name: translate
      version: ${model.version}
    replicas: ${model.replicas}
`;
}

/** The agent's HelmRelease: the chart from the platform repository, with this cluster's values. */
function agentRelease(tag: string): string {
  return `apiVersion: ${HELM_API_VERSION}
kind: HelmRelease
metadata:
  name: node-agent
  namespace: ${NS}
spec:
  interval: 1m
  releaseName: node-agent
  targetNamespace: ${AGENT_NS}
  chart:
    spec:
      chart: ./charts/node-exporter
      sourceRef:
        kind: GitRepository
        name: platform
  install:
    disableWait: ${!values.workloads}
  upgrade:
    disableWait: ${!values.workloads}
  values:
    image:
      tag: ${tag}
    podLabels:
      cluster: demo
      team: ml-platform
`;
}

/** The platform repository: `infra` (the namespace, the model registry's address) and `apps`
 * (the model server: a `base`, and a `staging` overlay that names the model version). */
function stack(
  modelVersion: string,
  options: { canary: boolean; broken?: boolean; agentTag?: string; translate?: ModelValues },
): Record<string, string | null> {
  return {
    ...AGENT_CHART,
    ...MODEL_CHART,
    // The node agent a KustomizationSet installs on every registered cluster (the last step).
    ...FLEET_FILES,
    // A second model server, from the team's chart: its version and replicas are chart values in Git.
    'models/kustomization.yaml': 'resources:\n  - translate-api.yaml\n',
    'models/translate-api.yaml': modelRelease(options.translate ?? { version: '2.0.0', replicas: 1 }),
    // The per-cluster agent, as a platform team keeps it: a HelmRelease in Git, its values beside it.
    'agents/kustomization.yaml': 'resources:\n  - node-agent.yaml\n',
    'agents/node-agent.yaml': agentRelease(options.agentTag ?? 'v1.11.1'),
    'infra/kustomization.yaml': 'resources:\n  - namespace.yaml\n  - registry.yaml\n',
    'infra/namespace.yaml': `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${APP_NS}\n---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${AGENT_NS}\n`,
    'infra/registry.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: model-registry\n  namespace: ${APP_NS}\ndata:\n  url: https://models.acme.internal\n`,
    'apps/base/kustomization.yaml': 'resources:\n  - sentiment-api.yaml\n',
    'apps/base/sentiment-api.yaml': `apiVersion: apps/v1
kind: Deployment
metadata:
  name: sentiment-api
  labels: {app: sentiment-api}
spec:
  replicas: 1
  selector:
    matchLabels: {app: sentiment-api}
  template:
    metadata:
      labels: {app: sentiment-api}
    spec:
      containers:
        - name: server
          image: ghcr.io/acme/sentiment-server:latest
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
    'apps/staging/kustomization.yaml': `namespace: ${APP_NS}
resources:
  - ../base
${options.canary ? '  - canary.yaml\n' : ''}${options.broken ? '  - autoscaler.yaml\n' : ''}images:
  - name: ghcr.io/acme/sentiment-server
    newTag: "${modelVersion}"
replicas:
  - name: sentiment-api
    count: 2
configMapGenerator:
  - name: model-config
    literals:
      - MODEL_VERSION=${modelVersion}
      - MAX_BATCH=32
`,
    // For trying `mooring create` in another namespace (the demo prints the commands).
    'hello/kustomization.yaml': 'resources:\n  - hello.yaml\n',
    'hello/hello.yaml':
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: hello\n  namespace: default\ndata:\n  greeting: hello from Git\n',
    'apps/staging/canary.yaml': options.canary
      ? 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: canary-traffic\ndata:\n  weight: "10"\n'
      : null,
  };
}

type Mooring = KubeObject & {
  status?: {
    lastAppliedRevision?: string;
    artifact?: { revision?: string };
    conditions?: { type: string; status: string; reason: string; message: string }[];
  };
};
const ks = (name: string) => ({
  apiVersion: KUSTOMIZE_API_VERSION,
  kind: 'Kustomization',
  namespace: NS,
  name,
});
const readyOf = (o: Mooring) => o.status?.conditions?.find((c) => c.type === 'Ready');
const applied = (name: string, rev: string) => async () => {
  const k = await client.get<Mooring>(ks(name));
  return k.status?.lastAppliedRevision === rev && readyOf(k)?.status === 'True' ? k : undefined;
};

/** The status table, as `mooring get all -A` shows it. */
async function statusTable(): Promise<void> {
  for (const line of tableLines(await statusRows(client))) say(line);
}

async function showWorkloads(): Promise<void> {
  const deploy = await client.get<
    KubeObject & {
      spec: { replicas: number; template: { spec: { containers: { image: string }[] } } };
      status?: { readyReplicas?: number };
    }
  >({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: APP_NS, name: 'sentiment-api' });
  const cms = (
    await client.list<KubeObject & { data?: Record<string, string> }>('v1', 'ConfigMap', {
      namespace: APP_NS,
    })
  ).items
    .filter((c) => c.metadata.name !== 'kube-root-ca.crt')
    .map(
      (c) => `${c.metadata.name}${c.data?.MODEL_VERSION ? ` (MODEL_VERSION=${c.data.MODEL_VERSION})` : ''}`,
    );
  const image = deploy.spec.template.spec.containers[0]?.image;
  say(
    `   Deployment sentiment-api  ${image}  ready ${deploy.status?.readyReplicas ?? 0}/${deploy.spec.replicas}`,
  );
  say(`   ConfigMaps               ${cms.join(', ')}`);
}

/** Releases what a previous run left (its objects carry Mooring's finalizer and no operator runs now). */
async function cleanSlate(): Promise<void> {
  for (const [apiVersion, kind, labelSelector] of [...STATUS_KINDS, ...FLEET_FINALIZED]) {
    const left = await client
      .list(apiVersion, kind, { namespace: NS, labelSelector })
      .catch(() => ({ items: [] as KubeObject[] }));
    for (const o of left.items) {
      await client.mergePatch(
        { apiVersion, kind, namespace: NS, name: o.metadata.name! },
        { metadata: { finalizers: null } },
      );
    }
  }
  for (const name of [NS, APP_NS, AGENT_NS, FLEET_NS]) {
    await client.delete({ apiVersion: 'v1', kind: 'Namespace', name }).catch(() => {});
    await until(`the previous demo namespace ${name} to go`, async () =>
      (await client.getOrUndefined({ apiVersion: 'v1', kind: 'Namespace', name })) ? undefined : true,
    );
  }
}

const timings: [string, number][] = [];
// The fleet step's second cluster starts now, beside the first steps, so that step waits only on Mooring.
const secondCluster = startSecondCluster(join(dirname(kubeconfig), 'edge-plane'));
const storage = await mkdtemp(join(tmpdir(), 'mooring-demo-'));
const git = await GitServer.start();
const receiverPort = await freePort();
const eventsPort = await freePort();
// Where the Provider delivers alerts: in a real setup Slack, Teams or a webhook of your own.
const alerts: string[] = [];
const alertSink = http.createServer((req, res) => {
  let body = '';
  req.on('data', (d: Buffer) => (body += d));
  req.on('end', () => {
    try {
      const event = JSON.parse(body) as {
        involvedObject?: { kind?: string; name?: string };
        message?: string;
      };
      alerts.push(
        `${event.involvedObject?.kind}/${event.involvedObject?.name}: ${event.message?.split('\n')[0]}`,
      );
    } catch {}
    res.writeHead(200).end();
  });
});
await new Promise<void>((r) => alertSink.listen(0, '127.0.0.1', r));
const sinkPort = (alertSink.address() as net.AddressInfo).port;
const shutdown = new AbortController();
const operatorDefinitions = [sourceOperator(), kustomizeOperator(), notificationOperator()];
const options = parseOperatorOptions(
  [
    '--kubeconfig',
    kubeconfig,
    // Every namespace, as an installed Mooring: `mooring create ... -n default` works here too.
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
    `127.0.0.1:${eventsPort}`,
    '--events-addr',
    `http://127.0.0.1:${eventsPort}/`,
    '--requeue-dependency',
    '1s',
    '--log-level',
    'silent',
  ],
  {},
  { extraFlags: Object.assign({}, ...operatorDefinitions.map((d) => d.extraFlags ?? {})) },
);
let operators: Promise<number> | undefined;
let unmark: (() => Promise<void>) | undefined;
let ui: UiServer | undefined;
try {
  const version = await client.request<{ gitVersion: string }>({ method: 'GET', path: '/version' });
  say(
    `Kubernetes ${version.gitVersion} is running locally${values.workloads ? ', with a scheduler and fake nodes (kwok)' : ''}.`,
  );
  await cleanSlate();
  await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });

  step(
    1,
    'A platform repository declares infra (namespace, registry address) and apps (base + staging overlay).',
  );
  const repo = await git.createRepo('platform');
  let commit = await repo.commit(stack('1.0.0', { canary: true }), 'sentiment model 1.0.0');
  say(`   pushed ${commit.slice(0, 7)} to ${repo.url}`);

  step(2, 'Mooring starts (source, kustomize, notification in one process); apps waits for infra.');
  await new Promise<void>((resolve, reject) => {
    operators = runOperators(operatorDefinitions, options, {
      shutdown: shutdown.signal,
      onReady: () => resolve(),
    });
    operators.then(() => reject(new Error('the operators stopped early')), reject);
  });
  // No operator Deployment runs on this plane; this Lease tells `mooring check` they run here.
  unmark = await markLocalOperators(client, {
    operators: ['source', 'kustomize', 'notification'],
    watchNamespace: undefined,
    runBy: 'npm run demo',
  });
  // The web UI (`mooring ui`) in this process, as the demo's own credentials, loopback only.
  ui = await startUiServer({ client });
  say(`   web UI: ${ui.url}`);
  const token = randomBytes(16).toString('hex');
  const kustomization = (name: string, path: string, extra: Record<string, unknown> = {}) =>
    ({
      apiVersion: KUSTOMIZE_API_VERSION,
      kind: 'Kustomization',
      metadata: { name, namespace: NS },
      spec: {
        // Drift is corrected unasked within a minute; a new commit is applied as soon as it is fetched.
        interval: '1m',
        prune: true,
        path,
        sourceRef: { kind: 'GitRepository', name: 'platform' },
        ...extra,
      },
    }) as KubeObject;
  const objects: KubeObject[] = [
    {
      apiVersion: SOURCE_API_VERSION,
      kind: 'GitRepository',
      metadata: { name: 'platform', namespace: NS },
      // A push is fetched within GIT_INTERVAL; the Receiver's webhook makes it at once.
      spec: { url: repo.url, interval: GIT_INTERVAL, ref: { branch: 'main' } },
    } as KubeObject,
    kustomization('infra', './infra'),
    kustomization('apps', './apps/staging', {
      dependsOn: [{ name: 'infra' }],
      wait: !!values.workloads,
      timeout: '2m',
    }),
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
    {
      apiVersion: NOTIFICATION_API_VERSION,
      kind: 'Provider',
      metadata: { name: 'team-webhook', namespace: NS },
      spec: { type: 'generic', address: `http://127.0.0.1:${sinkPort}/alerts` },
    } as KubeObject,
    {
      apiVersion: NOTIFICATION_API_VERSION,
      kind: 'Alert',
      metadata: { name: 'deployments', namespace: NS },
      spec: {
        providerRef: { name: 'team-webhook' },
        eventSeverity: 'info',
        eventSources: [{ kind: 'Kustomization', name: '*' }],
        // Only what a team wants pinged about; the rest stays in the Kubernetes events.
        inclusionList: ['^Applied revision'],
      },
    } as KubeObject,
  ];
  let t0 = Date.now();
  for (const o of objects) await client.create(o);
  await until('the first revision applied', applied('apps', `main@sha1:${commit}`));
  timings.push([values.workloads ? 'first sync, pods Ready' : 'first sync', Date.now() - t0]);
  say(`   infra, then apps, applied in ${Date.now() - t0} ms${values.workloads ? ', pods Ready' : ''}`);
  await statusTable();
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
  const push = async (sha: string) => {
    const body = JSON.stringify({
      ref: 'refs/heads/main',
      after: sha,
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
    return res.status;
  };
  const gitRepository = {
    apiVersion: SOURCE_API_VERSION,
    kind: 'GitRepository',
    namespace: NS,
    name: 'platform',
  };
  type Requested = KubeObject & { status?: { lastHandledReconcileAt?: string } };
  const requestedAt = (o: Requested) => o.metadata.annotations?.['reconcile.mooring.dev/requestedAt'];
  const before = requestedAt(await client.get<Requested>(gitRepository));
  commit = await repo.commit(stack('1.1.0', { canary: true }), 'sentiment model 1.1.0');
  t0 = Date.now();
  const answer = await push(commit);
  // The 10 s poll would fetch the commit too; this shows the webhook is what asked for it.
  const handled = await until('the Receiver to trigger the GitRepository', async () => {
    const o = await client.get<Requested>(gitRepository);
    const at = requestedAt(o);
    return at && at !== before && o.status?.lastHandledReconcileAt === at ? at : undefined;
  }).catch(() => undefined);
  say(
    `   webhook answered ${answer}${handled ? ': the Receiver had GitRepository/platform fetch at once' : ', but the GitRepository was not asked to fetch'}`,
  );
  await until('the promotion applied', applied('apps', `main@sha1:${commit}`));
  timings.push([values.workloads ? 'push → applied, pods Ready' : 'push → applied', Date.now() - t0]);
  say(`   applied main@sha1:${commit.slice(0, 7)} ${Date.now() - t0} ms after the push`);
  await showWorkloads();
  const appliedAlert = (a: string) =>
    a.startsWith('Kustomization/apps') && a.includes(`Applied revision: main@sha1:${commit}`);
  await until('the alert', async () => (alerts.some(appliedAlert) ? true : undefined), 10_000).catch(
    () => {},
  );
  say(`   the team's webhook got: ${alerts.find(appliedAlert) ?? '(no alert yet)'}`);

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
  await client.mergePatch(ks('apps'), {
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
  say(`   MAX_BATCH is 32 again after ${Date.now() - t0} ms (unasked, the next reconcile within 1m would)`);

  step(5, 'A broken commit (a file that does not exist) is refused; the last good revision keeps running.');
  const good = commit;
  commit = await repo.commit(
    stack('1.2.0', { canary: true, broken: true }),
    'model 1.2.0 with an autoscaler (forgot the file)',
  );
  t0 = Date.now();
  await push(commit);
  const refused = await until('the broken revision refused', async () => {
    const k = await client.get<Mooring>(ks('apps'));
    const ready = readyOf(k);
    return ready?.status === 'False' && ready.reason === 'BuildFailed' ? ready : undefined;
  });
  timings.push(['broken commit refused', Date.now() - t0]);
  say(`   apps: Ready False, ${refused.reason}: ${refused.message.slice(0, 110)}`);
  say(`   still applied: main@sha1:${good.slice(0, 7)}`);
  await showWorkloads();

  step(6, 'The fix is a new commit (and it ends the canary): applied, and the canary pruned.');
  commit = await repo.commit(stack('1.2.0', { canary: false }), 'model 1.2.0; end the canary');
  t0 = Date.now();
  await push(commit);
  await until('the fix applied', applied('apps', `main@sha1:${commit}`));
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
  timings.push(['fix applied, canary pruned', Date.now() - t0]);
  say(`   healed in ${Date.now() - t0} ms`);
  await showWorkloads();

  step(
    7,
    "Helm charts from Git: a HelmRelease installs node-exporter (a per-cluster agent), another the team's model-server chart.",
  );
  const agents = kustomization('agents', './agents', { dependsOn: [{ name: 'infra' }] });
  const models = kustomization('models', './models', { dependsOn: [{ name: 'infra' }] });
  const helmRelease = {
    apiVersion: HELM_API_VERSION,
    kind: 'HelmRelease',
    namespace: NS,
    name: 'node-agent',
  };
  const modelHelmRelease = { ...helmRelease, name: 'translate-api' };
  type Release = Mooring & {
    status?: { history?: { version: number; chartName: string; chartVersion: string; status: string }[] };
  };
  const released =
    (version: number, key = helmRelease) =>
    async () => {
      const hr = await client.get<Release>(key);
      const latest = hr.status?.history?.[0];
      return readyOf(hr)?.status === 'True' && latest?.version === version && latest.status === 'deployed'
        ? hr
        : undefined;
    };
  const agentImage = async () => {
    const ds = await client.get<
      KubeObject & { spec: { template: { spec: { containers: { image: string }[] } } } }
    >({
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      namespace: AGENT_NS,
      name: 'node-agent-prometheus-node-exporter',
    });
    return ds.spec.template.spec.containers[0]?.image;
  };
  const modelServer = async () => {
    const deploy = await client.get<
      KubeObject & {
        spec: { replicas: number; template: { spec: { containers: { image: string }[] } } };
        status?: { readyReplicas?: number };
      }
    >({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: APP_NS, name: 'translate-api' });
    return `${deploy.spec.template.spec.containers[0]?.image}  ready ${deploy.status?.readyReplicas ?? 0}/${deploy.spec.replicas}`;
  };
  t0 = Date.now();
  await client.create(agents);
  await client.create(models);
  let release = await until('the agent released', released(1), 180_000);
  timings.push(['HelmRelease installed', Date.now() - t0]);
  const r1 = release.status!.history![0]!;
  say(`   ${r1.chartName} ${r1.chartVersion} released as revision ${r1.version} in ${Date.now() - t0} ms`);
  say(`   DaemonSet node-agent-prometheus-node-exporter  ${await agentImage()}`);
  const m1 = (await until('the model server released', released(1, modelHelmRelease), 180_000)).status!
    .history![0]!;
  say(`   ${m1.chartName} ${m1.chartVersion} released as translate-api revision ${m1.version}`);
  say(`   Deployment translate-api  ${await modelServer()}`);

  step(8, "Promote the agent by changing a chart value in Git: Helm's upgrade, release revision 2.");
  commit = await repo.commit(stack('1.2.0', { canary: false, agentTag: 'v1.12.1' }), 'node agent v1.12.1');
  t0 = Date.now();
  await push(commit);
  release = await until('the agent upgraded', released(2), 180_000);
  timings.push(['HelmRelease upgraded', Date.now() - t0]);
  say(`   upgraded to revision 2 in ${Date.now() - t0} ms: ${await agentImage()}`);
  say(
    `   (helm sees it too: helm history node-agent -n ${AGENT_NS}, or npx mooring history hr node-agent -n ${NS})`,
  );

  step(9, "Someone edits the agent's DaemonSet by hand; the HelmRelease puts the chart's values back.");
  const daemonSet = {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    namespace: AGENT_NS,
    name: 'node-agent-prometheus-node-exporter',
  };
  await client.mergePatch(daemonSet, {
    spec: {
      template: {
        spec: { containers: [{ name: 'node-exporter', image: 'quay.io/prometheus/node-exporter:v0.0.1' }] },
      },
    },
  });
  say(`   set the image to ${await agentImage()} behind Git's back`);
  t0 = Date.now();
  await client.mergePatch(helmRelease, {
    metadata: { annotations: { 'reconcile.mooring.dev/requestedAt': new Date().toISOString() } },
  });
  await until('the agent drift reverted', async () =>
    (await agentImage())?.endsWith(':v1.12.1') ? true : undefined,
  );
  timings.push(['HelmRelease drift reverted', Date.now() - t0]);
  const afterRepair = (await client.get<Release>(helmRelease)).status?.history?.[0]?.version;
  say(
    `   ${await agentImage()} again after ${Date.now() - t0} ms, ${afterRepair === 2 ? 'and still revision 2 (no new release for a repair)' : `now revision ${afterRepair}`}`,
  );

  step(10, 'Promote the translate model by changing its chart values in Git (model 2.1.0, 2 replicas).');
  commit = await repo.commit(
    stack('1.2.0', { canary: false, agentTag: 'v1.12.1', translate: { version: '2.1.0', replicas: 2 } }),
    'translate model 2.1.0 on 2 replicas',
  );
  t0 = Date.now();
  await push(commit);
  await until('the model server upgraded', released(2, modelHelmRelease), 180_000);
  timings.push(['model chart value promoted', Date.now() - t0]);
  say(`   translate-api upgraded to revision 2 in ${Date.now() - t0} ms: ${await modelServer()}`);
  say(`   (npx mooring trace deployment translate-api -n ${APP_NS}: HelmRelease, HelmChart, commit)`);

  step(11, 'A second local cluster joins: one KustomizationSet installs the same agent on both clusters.');
  const second = await secondCluster.ready;
  const secondClient = await KubeClient.fromKubeconfig(second.kubeconfig);
  say(`   a second control plane (edge) started in ${second.startMs} ms, beside the steps above`);
  t0 = Date.now();
  await client.create(await clusterSecret(NS, 'demo', kubeconfig, { region: 'eu-west' }));
  await client.create(await clusterSecret(NS, 'edge', second.kubeconfig, { region: 'us-east' }));
  await client.create(fleetSet(NS, 'platform'));
  const clusters = [
    ['demo', client],
    ['edge', secondClient],
  ] as const;
  await until('both fleet members Ready', () => fleetReady(client, NS, clusters.length), 120_000);
  const fleetAgents = await until('the agent on both clusters', async () => {
    const found = await Promise.all(clusters.map(([, c]) => agentOn(c)));
    return found.every((a) => a !== undefined) ? found : undefined;
  });
  timings.push(['agent on two clusters', Date.now() - t0]);
  secondClient.close();
  for (const [i, [name]] of clusters.entries())
    say(
      `   cluster ${name.padEnd(5)} DaemonSet ${FLEET_NS}/node-agent  ${fleetAgents[i]}  (Kustomization node-agent-${name})`,
    );
  say(
    `   both members Ready in ${Date.now() - t0} ms (npx mooring tree kustomizationset node-agent -n ${NS})`,
  );

  say('\nSummary (this machine, this run):');
  for (const [what, ms] of timings) say(`   ${what.padEnd(28)} ${ms} ms`);
  say(`   "Applied revision" alerts delivered to the team's webhook: ${alerts.length}`);
  const kc = relative(process.cwd(), kubeconfig) || kubeconfig;
  const kubectl = relative(process.cwd(), `${repoRoot}/bin/kubectl`);
  say('\nExplore (in another terminal, in this directory):');
  say(`  export KUBECONFIG=${kc}`);
  say('  npx mooring get all -A');
  say(`  npx mooring tree kustomization apps -n ${NS}`);
  say(`  npx mooring events -n ${NS} --for Kustomization/apps`);
  say(`  npx mooring trace deployment sentiment-api -n ${APP_NS}   # which Kustomization and commit`);
  say(`  npx mooring history helmrelease node-agent -n ${NS}   # the agent's Helm revisions`);
  say(`  npx mooring tree helmrelease translate-api -n ${NS}   # what the model's release applied`);
  say(`  npx mooring trace deployment translate-api -n ${APP_NS}   # its HelmRelease, HelmChart and commit`);
  say(`  ${kubectl} -n ${APP_NS} get deploy,svc,cm`);
  say('  hack/control-plane down      # stop the control plane and remove its data');
  if (ui && !values.once) say(`\nWeb UI, while this runs: ${ui.url}`);
  if (values.once) {
    say('\nStatus at the end:');
    await statusTable();
    say(
      '\n`npm run demo` without --once keeps Mooring running: push to its repository, suspend, create in any namespace, and watch the table follow.',
    );
  } else {
    // Only while the demo runs: its Git server goes with it. A clone of its own, so the commands
    // below work as printed (a fixed /tmp path would already exist on a second run).
    const clone = join(dirname(kubeconfig), 'demo-platform');
    await rm(clone, { recursive: true, force: true });
    await promisify(execFile)('git', ['clone', '-q', repo.url, clone]);
    const at = relative(process.cwd(), clone) || clone;
    say(`\nChange it while this runs (Mooring watches every namespace; the table below follows):`);
    say(`  # ${at} is a clone of the platform repository: edit ${at}/apps/staging, then`);
    say(`  npx mooring diff kustomization apps -n ${NS} --path ${at}/apps/staging`);
    say(
      `  git -C ${at} commit -qam 'my change' && git -C ${at} push -q   # fetched within ${GIT_INTERVAL}, then applied`,
    );
    say(`  npx mooring suspend kustomization apps -n ${NS}   # and resume`);
    say(`  npx mooring create source git platform -n default --url ${repo.url} --branch main --interval 10s`);
    say(
      '  npx mooring create kustomization hello -n default --source GitRepository/platform --path ./hello --prune',
    );
    say('  npx mooring delete kustomization hello -n default --yes   # prunes the ConfigMap it applied');
    const tty = !!process.stdout.isTTY && process.env.TERM !== 'dumb';
    say(
      `\nLive status, every namespace (${tty ? 'redrawn as it changes' : 'a line per change'}; Ctrl-C stops the operators and the Git server):`,
    );
    const stop = new AbortController();
    process.once('SIGINT', () => stop.abort());
    process.once('SIGTERM', () => stop.abort());
    await followStatus({
      rows: () => statusRows(client),
      write: (text) => process.stdout.write(text),
      output: () => ({ tty, columns: process.stdout.columns }),
      signal: stop.signal,
    });
    say(
      '\nStopping Mooring and the Git server; the control plane keeps running (hack/control-plane down stops it).',
    );
  }
} finally {
  await ui?.close();
  await unmark?.();
  shutdown.abort();
  await operators?.catch(() => 1);
  await git.close();
  await new Promise((r) => alertSink.close(r));
  await rm(storage, { recursive: true, force: true });
  await secondCluster.stop();
  client.close();
}
