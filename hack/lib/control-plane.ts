import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { dirname, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { KubeClient, type KubeObject } from '@mooring/runtime';
import { parseAllDocuments } from 'yaml';
import { generatePki, type Pki } from './certs.ts';
import { freePort, isOurProcess, startDetached, stopProcess, tail } from './processes.ts';

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const binDir = join(repoRoot, 'bin');
const ETCD = join(binDir, 'etcd');
const APISERVER = join(binDir, 'kube-apiserver');
const KCM = join(binDir, 'kube-controller-manager');
const SCHEDULER = join(binDir, 'kube-scheduler');
const KWOK = join(binDir, 'kwok');
/** The Stages kwok simulates nodes and pods with, written by `build --with-workloads`. */
const KWOK_STAGES = join(binDir, 'kwok-stages.yaml');

/** The fake Nodes kwok manages on a plane with workloads; pods schedule onto them. */
export const FAKE_NODES: readonly string[] = ['kwok-node-0', 'kwok-node-1'];
/** What each fake Node offers the scheduler. */
const FAKE_NODE_ALLOCATABLE = { cpu: '16', memory: '64Gi', pods: '110' };

/** Where one control plane keeps its state; the default one writes `.mooring/kubeconfig`. */
export interface ControlPlaneLocation {
  dir: string;
  kubeconfig: string;
}

export function defaultLocation(): ControlPlaneLocation {
  return { dir: join(repoRoot, '.mooring/control-plane'), kubeconfig: join(repoRoot, '.mooring/kubeconfig') };
}

/** A location of its own under `dir`, e.g. the test suite's, so tests never stop the demo's cluster. */
export function locationAt(dir: string): ControlPlaneLocation {
  const abs = resolve(dir);
  return { dir: abs, kubeconfig: join(abs, 'kubeconfig') };
}

/** The processes that make workloads run: controllers, scheduler and kwok's fake kubelets. */
export interface WorkloadState {
  kcmPid: number;
  schedulerPid: number;
  kwokPid: number;
  kcmPort: number;
  schedulerPort: number;
  /** Where kwok serves the kubelet API (pod logs) on 127.0.0.1; absent in states written before it did. */
  kubeletPort?: number;
}

interface State {
  etcdPid: number;
  apiserverPid: number;
  etcdPort: number;
  apiPort: number;
  /** Kept so a test can restart the API server exactly as it was. */
  apiserverArgs: string[];
  /** Present once `up --with-workloads` started them. */
  workloads?: WorkloadState;
}

/** How `up` starts (or upgrades) a control plane. */
export interface UpOptions {
  /** Also run kube-controller-manager, kube-scheduler and kwok, and create the fake Nodes. */
  workloads?: boolean;
  /**
   * kube-controller-manager's client limit (`--kube-api-qps`, burst twice that) when it is started;
   * unset, its default of 20. A benchmark raises it to show where KCM, not the tool, is the ceiling.
   */
  kcmQps?: number;
}

export interface Running extends State {
  kubeconfig: string;
  server: string;
  /** True when an already healthy control plane was reused (workloads may have been added to it). */
  reused: boolean;
  /** True when its kube-controller-manager, kube-scheduler and kwok run. */
  workloadsRunning: boolean;
}

type Log = (line: string) => void;

function readState(loc: ControlPlaneLocation): State | undefined {
  try {
    return JSON.parse(readFileSync(join(loc.dir, 'state.json'), 'utf8')) as State;
  } catch {
    return undefined;
  }
}

function writeState(loc: ControlPlaneLocation, state: State): void {
  writeFileSync(join(loc.dir, 'state.json'), `${JSON.stringify(state, null, 2)}\n`);
}

async function httpOk(url: string, ca?: Buffer): Promise<boolean> {
  return new Promise((done) => {
    const req = https.request(url, { ca, timeout: 2000 }, (res) => {
      res.resume();
      done(res.statusCode === 200);
    });
    req.on('error', () => done(false));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

async function etcdHealthy(port: number): Promise<boolean> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(2000) });
    return res.ok && ((await res.json()) as { health?: string }).health === 'true';
  } catch {
    return false;
  }
}

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs: number, alive: () => boolean) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    if (!alive()) throw new Error(`${what} exited during start-up`);
    await sleep(100);
  }
  throw new Error(`${what} was not ready within ${timeoutMs / 1000}s`);
}

function kubeconfigYaml(server: string, pki: Pki): string {
  const b64 = (file: string) => readFileSync(file).toString('base64');
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: mooring-local',
    '  cluster:',
    `    server: ${server}`,
    `    certificate-authority-data: ${b64(pki.caCert)}`,
    'users:',
    '- name: mooring-admin',
    '  user:',
    `    client-certificate-data: ${b64(pki.adminCert)}`,
    `    client-key-data: ${b64(pki.adminKey)}`,
    'contexts:',
    '- name: mooring-local',
    '  context:',
    '    cluster: mooring-local',
    '    user: mooring-admin',
    'current-context: mooring-local',
    '',
  ].join('\n');
}

/** True when both processes of `state` run and the API server answers /readyz. */
async function healthy(loc: ControlPlaneLocation, state: State): Promise<boolean> {
  if (!isOurProcess(state.etcdPid, ETCD) || !isOurProcess(state.apiserverPid, APISERVER)) return false;
  if (!existsSync(loc.kubeconfig)) return false;
  const ca = readFileSync(join(loc.dir, 'pki/ca.crt'));
  return httpOk(`https://127.0.0.1:${state.apiPort}/readyz`, ca);
}

/** Stops whatever a previous run left and removes its data. Safe on a crashed or half-started run. */
export async function down(loc: ControlPlaneLocation, log: Log = () => {}): Promise<void> {
  const state = readState(loc);
  if (state) {
    if (state.workloads) {
      await stopWorkloads(state.workloads);
      log(`stopped kwok, kube-scheduler and kube-controller-manager`);
    }
    await stopProcess(state.apiserverPid, APISERVER);
    await stopProcess(state.etcdPid, ETCD);
    log(`stopped kube-apiserver (pid ${state.apiserverPid}) and etcd (pid ${state.etcdPid})`);
  }
  rmSync(loc.dir, { recursive: true, force: true });
  rmSync(loc.kubeconfig, { force: true });
}

async function start(
  loc: ControlPlaneLocation,
  log: Log,
  workloads: boolean,
  kcmQps?: number,
): Promise<State> {
  const pki = generatePki(join(loc.dir, 'pki'));
  const etcdPort = await freePort();
  const peerPort = await freePort();
  const apiPort = await freePort();
  const state: State = { etcdPid: 0, apiserverPid: 0, etcdPort, apiPort, apiserverArgs: [] };
  const save = () => writeState(loc, state);

  const peer = `http://127.0.0.1:${peerPort}`;
  state.etcdPid = startDetached(
    ETCD,
    [
      '--name=mooring',
      `--data-dir=${join(loc.dir, 'etcd')}`,
      `--listen-client-urls=http://127.0.0.1:${etcdPort}`,
      `--advertise-client-urls=http://127.0.0.1:${etcdPort}`,
      `--listen-peer-urls=${peer}`,
      `--initial-advertise-peer-urls=${peer}`,
      `--initial-cluster=mooring=${peer}`,
      // Test data is disposable; fsync dominates etcd latency on a small VM.
      '--unsafe-no-fsync',
      '--log-level=warn',
    ],
    join(loc.dir, 'etcd.log'),
  );
  save();
  await waitFor(
    'etcd',
    () => etcdHealthy(etcdPort),
    30_000,
    () => isOurProcess(state.etcdPid, ETCD),
  ).catch((err) => {
    throw new Error(`${(err as Error).message}; etcd.log ends with:\n${tail(join(loc.dir, 'etcd.log'))}`);
  });
  log(`etcd is healthy on 127.0.0.1:${etcdPort}`);

  state.apiserverArgs = [
    `--etcd-servers=http://127.0.0.1:${etcdPort}`,
    '--bind-address=127.0.0.1',
    '--advertise-address=127.0.0.1',
    `--secure-port=${apiPort}`,
    `--cert-dir=${join(loc.dir, 'pki')}`,
    `--tls-cert-file=${pki.servingCert}`,
    `--tls-private-key-file=${pki.servingKey}`,
    `--client-ca-file=${pki.caCert}`,
    `--service-account-issuer=https://127.0.0.1:${apiPort}/`,
    `--service-account-key-file=${pki.serviceAccountPub}`,
    `--service-account-signing-key-file=${pki.serviceAccountKey}`,
    // Room for tens of thousands of Services: the convergence benchmark creates one per Kustomization.
    '--service-cluster-ip-range=10.96.0.0/16',
    '--authorization-mode=RBAC',
    '--allow-privileged=true',
    ...serviceAccountAdmission(workloads),
    ...(workloads ? [KUBELET_BY_INTERNAL_IP] : []),
    '--v=1',
  ];
  await startApiServer(loc, state);
  mkdirSync(dirname(loc.kubeconfig), { recursive: true });
  writeFileSync(loc.kubeconfig, kubeconfigYaml(`https://127.0.0.1:${apiPort}`, pki), { mode: 0o600 });
  if (workloads) await startWorkloads(loc, state, log, kcmQps);
  return state;
}

const NO_SERVICE_ACCOUNT_ADMISSION = '--disable-admission-plugins=ServiceAccount';

/**
 * Without a controller-manager nothing creates the `default` ServiceAccount that ServiceAccount
 * admission waits for, so it is off; with one (workloads) it stays on, as in a real cluster.
 */
function serviceAccountAdmission(workloads: boolean): string[] {
  return workloads ? [] : [NO_SERVICE_ACCOUNT_ADMISSION];
}

/**
 * The fake Nodes' Hostname does not resolve; their InternalIP is kwok's loopback kubelet server. No
 * --kubelet-certificate-authority, so the API server does not verify kwok's self-signed cert.
 */
const KUBELET_BY_INTERNAL_IP = '--kubelet-preferred-address-types=InternalIP';

/**
 * kwok's `Logs` kind (kwok.x-k8s.io/v1alpha1, schema left open): a test creates one per pod to
 * name the file kwok serves as that pod's container log (`spec.logs[].logsFile`).
 */
const KWOK_LOGS_CRD: KubeObject = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'logs.kwok.x-k8s.io' },
  spec: {
    group: 'kwok.x-k8s.io',
    scope: 'Namespaced',
    names: { kind: 'Logs', listKind: 'LogsList', plural: 'logs', singular: 'logs' },
    versions: [
      {
        name: 'v1alpha1',
        served: true,
        storage: true,
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      },
    ],
  },
};

/** True when every workload process of `state` still runs (pids are checked against our binaries). */
function workloadsRunning(state: State): boolean {
  const w = state.workloads;
  // A plane started before kwok served the kubelet API is restarted rather than reused.
  return (
    w !== undefined &&
    w.kubeletPort !== undefined &&
    isOurProcess(w.kcmPid, KCM) &&
    isOurProcess(w.schedulerPid, SCHEDULER) &&
    isOurProcess(w.kwokPid, KWOK)
  );
}

async function stopWorkloads(w: WorkloadState): Promise<void> {
  await stopProcess(w.kwokPid, KWOK);
  await stopProcess(w.schedulerPid, SCHEDULER);
  await stopProcess(w.kcmPid, KCM);
}

/** GET over TLS without verifying the serving cert: KCM and the scheduler sign their own. */
async function selfSignedOk(url: string): Promise<boolean> {
  return new Promise((done) => {
    const req = https.request(url, { rejectUnauthorized: false, timeout: 2000 }, (res) => {
      res.resume();
      done(res.statusCode === 200);
    });
    req.on('error', () => done(false));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

/**
 * Starts kube-controller-manager, kube-scheduler and kwok against the running API server, records
 * their pids as soon as each starts (so `down` can stop a half-started set), creates the fake
 * Nodes and waits until they are Ready and schedulable.
 */
async function startWorkloads(
  loc: ControlPlaneLocation,
  state: State,
  log: Log,
  kcmQps?: number,
): Promise<void> {
  const started = Date.now();
  const pki = join(loc.dir, 'pki');
  const kcmPort = await freePort();
  const schedulerPort = await freePort();
  const kubeletPort = await freePort();
  const w: WorkloadState = { kcmPid: 0, schedulerPid: 0, kwokPid: 0, kcmPort, schedulerPort, kubeletPort };
  state.workloads = w;
  const common = [`--kubeconfig=${loc.kubeconfig}`, '--leader-elect=false', '--bind-address=127.0.0.1'];
  w.kcmPid = startDetached(
    KCM,
    [
      ...common,
      `--secure-port=${kcmPort}`,
      // The token controller signs with the API server's SA key; root CA feeds kube-root-ca.crt.
      `--root-ca-file=${join(pki, 'ca.crt')}`,
      `--service-account-private-key-file=${join(pki, 'sa.key')}`,
      '--cluster-name=mooring',
      ...(kcmQps ? [`--kube-api-qps=${kcmQps}`, `--kube-api-burst=${2 * kcmQps}`] : []),
      '--v=1',
    ],
    join(loc.dir, 'kube-controller-manager.log'),
  );
  writeState(loc, state);
  w.schedulerPid = startDetached(
    SCHEDULER,
    [...common, `--secure-port=${schedulerPort}`, '--v=1'],
    join(loc.dir, 'kube-scheduler.log'),
  );
  writeState(loc, state);
  // kwok watches Logs from its start, so their CRD must exist first.
  const crdClient = await KubeClient.fromKubeconfig(loc.kubeconfig);
  try {
    await installCrds(crdClient, [KWOK_LOGS_CRD]);
  } finally {
    crdClient.close();
  }
  w.kwokPid = startDetached(
    KWOK,
    [
      `--kubeconfig=${loc.kubeconfig}`,
      `--config=${KWOK_STAGES}`,
      '--manage-all-nodes=false',
      '--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake',
      '--manage-nodes-with-label-selector=',
      '--manage-single-node=',
      // Pod IPs outside the service range 10.96.0.0/16.
      '--cidr=10.244.0.0/16',
      // The kubelet API (pod logs via the API server) on loopback: each fake Node gets InternalIP
      // 127.0.0.1 and this port as its kubelet endpoint.
      '--node-ip=127.0.0.1',
      `--node-port=${kubeletPort}`,
      `--server-address=127.0.0.1:${kubeletPort}`,
      '--enable-crds=Logs',
      '--node-lease-duration-seconds=40',
    ],
    join(loc.dir, 'kwok.log'),
    // kwok reads ~/.kwok/kwok.yaml when it exists; a work dir of its own keeps a user's config out.
    { KWOK_WORKDIR: join(loc.dir, 'kwok') },
  );
  writeState(loc, state);

  const fail = (logName: string) => (err: unknown) => {
    throw new Error(`${(err as Error).message}; ${logName} ends with:\n${tail(join(loc.dir, logName))}`);
  };
  await waitFor(
    'kube-controller-manager',
    () => selfSignedOk(`https://127.0.0.1:${kcmPort}/healthz`),
    60_000,
    () => isOurProcess(w.kcmPid, KCM),
  ).catch(fail('kube-controller-manager.log'));
  await waitFor(
    'kube-scheduler',
    () => selfSignedOk(`https://127.0.0.1:${schedulerPort}/healthz`),
    60_000,
    () => isOurProcess(w.schedulerPid, SCHEDULER),
  ).catch(fail('kube-scheduler.log'));
  const client = await KubeClient.fromKubeconfig(loc.kubeconfig);
  try {
    await ensureFakeNodes(client);
    await waitFor(
      'kwok (its fake Nodes Ready and untainted)',
      () => fakeNodesSchedulable(client),
      60_000,
      () => isOurProcess(w.kwokPid, KWOK),
    ).catch(fail('kwok.log'));
    await waitFor(
      "kwok's kubelet server",
      () => selfSignedOk(`https://127.0.0.1:${kubeletPort}/healthz`),
      30_000,
      () => isOurProcess(w.kwokPid, KWOK),
    ).catch(fail('kwok.log'));
    // ServiceAccount admission rejects pods until KCM made the namespace's default ServiceAccount.
    await waitFor(
      'the default ServiceAccount',
      async () =>
        (await client.getOrUndefined({
          apiVersion: 'v1',
          kind: 'ServiceAccount',
          namespace: 'default',
          name: 'default',
        })) !== undefined,
      30_000,
      () => isOurProcess(w.kcmPid, KCM),
    ).catch(fail('kube-controller-manager.log'));
  } finally {
    client.close();
  }
  log(
    `workloads run: kube-controller-manager (pid ${w.kcmPid}), kube-scheduler (pid ${w.schedulerPid}), ` +
      `kwok (pid ${w.kwokPid}) and ${FAKE_NODES.length} fake Nodes, ready in ${((Date.now() - started) / 1000).toFixed(1)}s`,
  );
}

/** Creates (or re-asserts) the fake Nodes: annotated for kwok, untainted, with allocatable resources. */
async function ensureFakeNodes(client: KubeClient): Promise<void> {
  for (const name of FAKE_NODES) {
    await client.apply(
      {
        apiVersion: 'v1',
        kind: 'Node',
        metadata: {
          name,
          annotations: { 'kwok.x-k8s.io/node': 'fake', 'node.alpha.kubernetes.io/ttl': '0' },
          labels: {
            'kubernetes.io/hostname': name,
            'kubernetes.io/os': 'linux',
            'kubernetes.io/arch': 'amd64',
            type: 'kwok',
          },
        },
      },
      { fieldManager: 'mooring-control-plane', force: true },
    );
    const resources = { allocatable: FAKE_NODE_ALLOCATABLE, capacity: FAKE_NODE_ALLOCATABLE };
    await client.mergePatch({ apiVersion: 'v1', kind: 'Node', name }, { status: resources }, 'status');
  }
}

interface NodeView extends KubeObject {
  spec?: { taints?: { key: string }[]; unschedulable?: boolean };
  status?: { conditions?: { type: string; status: string }[] };
}

/** True when every fake Node is Ready and carries no taint (KCM lifts `not-ready` once kwok reports). */
async function fakeNodesSchedulable(client: KubeClient): Promise<boolean> {
  for (const name of FAKE_NODES) {
    const node = await client.getOrUndefined<NodeView>({ apiVersion: 'v1', kind: 'Node', name });
    if (!node) return false;
    const ready = node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
    if (!ready || node.spec?.unschedulable || (node.spec?.taints?.length ?? 0) > 0) return false;
  }
  return true;
}

/**
 * Adds workloads to a running plane started without them: stops any the state file still lists,
 * restarts the API server with ServiceAccount admission on (same port and etcd, so data and the
 * kubeconfig stay valid), then starts the workload processes.
 */
async function addWorkloads(
  loc: ControlPlaneLocation,
  state: State,
  log: Log,
  kcmQps?: number,
): Promise<void> {
  if (state.workloads) await stopWorkloads(state.workloads);
  state.workloads = undefined;
  if (
    state.apiserverArgs.includes(NO_SERVICE_ACCOUNT_ADMISSION) ||
    !state.apiserverArgs.includes(KUBELET_BY_INTERNAL_IP)
  ) {
    log('restarting kube-apiserver with ServiceAccount admission on and kwok as kubelet, for workloads');
    state.apiserverArgs = [
      ...state.apiserverArgs.filter(
        (a) => a !== NO_SERVICE_ACCOUNT_ADMISSION && a !== KUBELET_BY_INTERNAL_IP,
      ),
      KUBELET_BY_INTERNAL_IP,
    ];
    await stopProcess(state.apiserverPid, APISERVER);
    await startApiServer(loc, state);
  }
  await startWorkloads(loc, state, log, kcmQps);
}

async function startApiServer(loc: ControlPlaneLocation, state: State): Promise<void> {
  state.apiserverPid = startDetached(APISERVER, state.apiserverArgs, join(loc.dir, 'kube-apiserver.log'));
  writeState(loc, state);
  const ca = readFileSync(join(loc.dir, 'pki/ca.crt'));
  await waitFor(
    'kube-apiserver',
    () => httpOk(`https://127.0.0.1:${state.apiPort}/readyz`, ca),
    90_000,
    () => isOurProcess(state.apiserverPid, APISERVER),
  ).catch((err) => {
    throw new Error(
      `${(err as Error).message}; kube-apiserver.log ends with:\n${tail(join(loc.dir, 'kube-apiserver.log'))}`,
    );
  });
}

/**
 * Stops the API server and starts it again on the same port and etcd, cutting every watch: the
 * fault tests use it to show informers recover. `whileDown` runs between the two.
 */
export async function restartApiServer(
  loc: ControlPlaneLocation,
  whileDown?: () => Promise<void>,
): Promise<void> {
  const state = readState(loc);
  if (!state) throw new Error(`no control plane runs at ${loc.dir}`);
  await stopProcess(state.apiserverPid, APISERVER);
  await whileDown?.();
  await startApiServer(loc, state);
}

/** The CRD manifests under `config/crds/` (written by hack/gen-crds.ts), in file-name order. */
export function readCrds(dir = join(repoRoot, 'config', 'crds')): KubeObject[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .flatMap((f) =>
      parseAllDocuments(readFileSync(join(dir, f), 'utf8'))
        .map((d) => d.toJS() as KubeObject | null)
        .filter((o): o is KubeObject => o !== null && o.kind === 'CustomResourceDefinition'),
    );
}

/** Applies the CRDs with server-side apply and waits until each is Established. */
export async function installCrds(client: KubeClient, crds: KubeObject[], timeoutMs = 30_000): Promise<void> {
  for (const crd of crds) await client.apply(crd, { fieldManager: 'mooring-hack', force: true });
  const deadline = Date.now() + timeoutMs;
  for (const crd of crds) {
    const key = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      name: crd.metadata.name!,
    };
    for (;;) {
      const live = await client.get<
        KubeObject & { status?: { conditions?: { type: string; status: string }[] } }
      >(key);
      if (live.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) break;
      if (Date.now() > deadline)
        throw new Error(`CRD ${key.name} was not Established within ${timeoutMs / 1000}s`);
      await sleep(100);
    }
  }
  client.mapper.invalidate();
}

/**
 * Starts etcd and kube-apiserver on free loopback ports, or reuses them when a previous `up` left a
 * healthy pair; anything else a previous run left (dead pids, a half-written data dir) is cleared
 * first. Installs the CRDs from `config/crds/` either way. With `workloads`, also runs
 * kube-controller-manager, kube-scheduler and kwok with fake Nodes, adding them to a reused plane
 * that lacks them.
 */
export async function up(
  loc: ControlPlaneLocation,
  log: Log = () => {},
  options: UpOptions = {},
): Promise<Running> {
  return withLock(loc, () => upLocked(loc, log, options));
}

/**
 * Runs `fn` while holding `<dir>.lock`, so two test processes that both ask for the same plane
 * (e.g. `testCluster({ workloads: true })` in parallel test files) don't both clear and start it.
 * A lock whose holder died is taken over.
 */
async function withLock<T>(loc: ControlPlaneLocation, fn: () => Promise<T>): Promise<T> {
  const lock = `${loc.dir}.lock`;
  mkdirSync(dirname(lock), { recursive: true });
  const deadline = Date.now() + 5 * 60_000;
  for (;;) {
    try {
      mkdirSync(lock);
      writeFileSync(join(lock, 'pid'), String(process.pid));
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      if (!lockHolderAlive(lock)) {
        rmSync(lock, { recursive: true, force: true });
        continue;
      }
      if (Date.now() > deadline) {
        throw new Error(
          `${lock} has been held for 5 minutes; remove it if no control-plane start is running`,
        );
      }
      await sleep(200);
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

function lockHolderAlive(lock: string): boolean {
  let pid: number;
  try {
    pid = Number(readFileSync(join(lock, 'pid'), 'utf8'));
  } catch {
    return true; // just created, pid not written yet
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function upLocked(loc: ControlPlaneLocation, log: Log, options: UpOptions): Promise<Running> {
  const workloads = options.workloads === true;
  for (const bin of [ETCD, APISERVER]) {
    if (!existsSync(bin)) throw new Error(`${bin} is missing: run hack/control-plane build first`);
  }
  for (const bin of workloads ? [KCM, SCHEDULER, KWOK, KWOK_STAGES] : []) {
    if (!existsSync(bin)) {
      throw new Error(`${bin} is missing: run hack/control-plane build --with-workloads first`);
    }
  }
  let state = readState(loc);
  let reused = false;
  if (state && (await healthy(loc, state))) {
    reused = true;
    log(`reusing the running control plane on 127.0.0.1:${state.apiPort}`);
    if (workloads && !workloadsRunning(state)) {
      log('it runs without workloads: adding them');
      await addWorkloads(loc, state, log, options.kcmQps);
    } else if (workloads) {
      // Someone may have deleted a fake Node; putting them back is cheap and idempotent.
      const client = await KubeClient.fromKubeconfig(loc.kubeconfig);
      try {
        await ensureFakeNodes(client);
      } finally {
        client.close();
      }
    }
  } else {
    if (state || existsSync(loc.dir)) log('clearing what an earlier run left behind');
    await down(loc);
    mkdirSync(loc.dir, { recursive: true });
    // A free port can be taken between probing and binding; one more try with new ports covers that.
    try {
      state = await start(loc, log, workloads, options.kcmQps);
    } catch (err) {
      log(`start failed, retrying once: ${(err as Error).message.split('\n')[0]}`);
      await down(loc);
      mkdirSync(loc.dir, { recursive: true });
      state = await start(loc, log, workloads, options.kcmQps);
    }
    log(`kube-apiserver is ready on https://127.0.0.1:${state.apiPort}`);
  }
  const client = await KubeClient.fromKubeconfig(loc.kubeconfig);
  try {
    const crds = readCrds();
    await installCrds(client, crds);
    log(`installed ${crds.length} Mooring CRDs`);
  } finally {
    client.close();
  }
  return {
    ...state,
    kubeconfig: loc.kubeconfig,
    server: `https://127.0.0.1:${state.apiPort}`,
    reused,
    workloadsRunning: workloadsRunning(state),
  };
}

/** The running control plane at `loc`, or undefined. */
export async function status(loc: ControlPlaneLocation): Promise<Running | undefined> {
  const state = readState(loc);
  if (!state || !(await healthy(loc, state))) return undefined;
  return {
    ...state,
    kubeconfig: loc.kubeconfig,
    server: `https://127.0.0.1:${state.apiPort}`,
    reused: true,
    workloadsRunning: workloadsRunning(state),
  };
}
