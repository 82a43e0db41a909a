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

interface State {
  etcdPid: number;
  apiserverPid: number;
  etcdPort: number;
  apiPort: number;
  /** Kept so a test can restart the API server exactly as it was. */
  apiserverArgs: string[];
}

export interface Running extends State {
  kubeconfig: string;
  server: string;
  /** True when an already healthy control plane was reused. */
  reused: boolean;
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
    await stopProcess(state.apiserverPid, APISERVER);
    await stopProcess(state.etcdPid, ETCD);
    log(`stopped kube-apiserver (pid ${state.apiserverPid}) and etcd (pid ${state.etcdPid})`);
  }
  rmSync(loc.dir, { recursive: true, force: true });
  rmSync(loc.kubeconfig, { force: true });
}

async function start(loc: ControlPlaneLocation, log: Log): Promise<State> {
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
    '--service-cluster-ip-range=10.0.0.0/24',
    '--authorization-mode=RBAC',
    '--allow-privileged=true',
    // No controller-manager runs, so nothing would create the default ServiceAccount it waits for.
    '--disable-admission-plugins=ServiceAccount',
    '--v=1',
  ];
  await startApiServer(loc, state);
  mkdirSync(dirname(loc.kubeconfig), { recursive: true });
  writeFileSync(loc.kubeconfig, kubeconfigYaml(`https://127.0.0.1:${apiPort}`, pki), { mode: 0o600 });
  return state;
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

/** The CRD manifests under `crds/`, in file-name order. */
export function readCrds(dir = join(repoRoot, 'crds')): KubeObject[] {
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
 * first. Installs the CRDs from `crds/` either way.
 */
export async function up(loc: ControlPlaneLocation, log: Log = () => {}): Promise<Running> {
  for (const bin of [ETCD, APISERVER]) {
    if (!existsSync(bin)) throw new Error(`${bin} is missing: run hack/control-plane build first`);
  }
  let state = readState(loc);
  let reused = false;
  if (state && (await healthy(loc, state))) {
    reused = true;
    log(`reusing the running control plane on 127.0.0.1:${state.apiPort}`);
  } else {
    if (state || existsSync(loc.dir)) log('clearing what an earlier run left behind');
    await down(loc);
    mkdirSync(loc.dir, { recursive: true });
    // A free port can be taken between probing and binding; one more try with new ports covers that.
    try {
      state = await start(loc, log);
    } catch (err) {
      log(`start failed, retrying once: ${(err as Error).message.split('\n')[0]}`);
      await down(loc);
      mkdirSync(loc.dir, { recursive: true });
      state = await start(loc, log);
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
  return { ...state, kubeconfig: loc.kubeconfig, server: `https://127.0.0.1:${state.apiPort}`, reused };
}

/** The running control plane at `loc`, or undefined. */
export async function status(loc: ControlPlaneLocation): Promise<Running | undefined> {
  const state = readState(loc);
  if (!state || !(await healthy(loc, state))) return undefined;
  return { ...state, kubeconfig: loc.kubeconfig, server: `https://127.0.0.1:${state.apiPort}`, reused: true };
}
