import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { promisify } from 'node:util';
import { KubeClient } from '@mooring/runtime';
import { down, locationAt, repoRoot, up } from '../../hack/lib/control-plane.ts';
import { testLocation, workloadsTestLocation } from '../../hack/lib/test-location.ts';

/** The cluster every integration test talks to. */
export interface TestCluster {
  kubeconfig: string;
  client: KubeClient;
}

/** Which test cluster: the shared plain one, or one where Deployments, Jobs and Pods really run. */
export interface TestClusterOptions {
  /**
   * A control plane with kube-controller-manager, kube-scheduler and kwok's fake Nodes, for tests
   * that wait on workload health. It is a separate plane (`.mooring/test-control-plane-workloads`),
   * started on first use and left up for the next run like the plain one; stop it with
   * `hack/control-plane down --dir .mooring/test-control-plane-workloads`.
   */
  workloads?: boolean;
}

let shared: Promise<TestCluster> | undefined;
let sharedWorkloads: Promise<TestCluster> | undefined;

/** Where the workloads test plane lives; `MOORING_WORKLOADS_DIR` moves it (e.g. a CI scratch dir). */
export function workloadsLocation() {
  return workloadsTestLocation();
}

async function connectWorkloads(): Promise<TestCluster> {
  // Reuse costs a /readyz probe and a CRD apply; a plane without workloads gets them added.
  const running = await up(workloadsLocation(), () => {}, { workloads: true });
  return connectTo(running.kubeconfig);
}

async function connectTo(kubeconfig: string): Promise<TestCluster> {
  const client = await KubeClient.fromKubeconfig(kubeconfig, { qps: 200, burst: 400 });
  // Fail here, loudly, rather than in every test: a test that needs the cluster never skips.
  await client.request({ method: 'GET', path: '/version' }).catch((err: Error) => {
    throw new Error(`the test control plane at ${kubeconfig} is not reachable: ${err.message}`);
  });
  return { kubeconfig, client };
}

async function connect(): Promise<TestCluster> {
  let kubeconfig = process.env.KUBECONFIG;
  if (!kubeconfig) {
    // A test file run on its own: start (or reuse) the suite's control plane. It stays up for the
    // next run; `hack/control-plane down --dir .mooring/test-control-plane` stops it.
    const running = await up(testLocation());
    kubeconfig = running.kubeconfig;
    process.env.KUBECONFIG = kubeconfig;
  }
  return connectTo(kubeconfig);
}

/**
 * Connects once per test process (and kind of cluster); rejects (failing the test) when no
 * control plane can start.
 */
export function testCluster(options: TestClusterOptions = {}): Promise<TestCluster> {
  if (options.workloads) {
    sharedWorkloads ??= connectWorkloads();
    return sharedWorkloads;
  }
  shared ??= connect();
  return shared;
}

/** A short DNS-1123 name unique to this run, e.g. `gitrepo-3f9a1c`. */
export function uniqueName(prefix: string): string {
  const slug = prefix
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40);
  return `${slug}-${randomBytes(3).toString('hex')}`;
}

/** Creates a namespace for one test and deletes it when the test ends. */
export async function testNamespace(
  t: TestContext,
  prefix = t.name,
  options: TestClusterOptions = {},
): Promise<string> {
  const { client } = await testCluster(options);
  const name = uniqueName(prefix || 'test');
  await client.create({
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name, labels: { 'test.mooring.dev/run': 'true' } },
  });
  t.after(async () => {
    await client.delete({ apiVersion: 'v1', kind: 'Namespace', name });
  });
  return name;
}

/** Runs the kubectl that `hack/` built against the test cluster; resolves to its stdout. */
export async function kubectl(...args: string[]): Promise<string> {
  const { kubeconfig } = await testCluster();
  const { stdout } = await promisify(execFile)(join(repoRoot, 'bin/kubectl'), [
    '--kubeconfig',
    kubeconfig,
    ...args,
  ]);
  return stdout;
}

/** A control plane of one test's own, and a client for it. */
export interface PrivateControlPlane {
  kubeconfig: string;
  server: string;
  /** Its directory: the PKI is under `pki/`. */
  dir: string;
  client: KubeClient;
}

/**
 * Starts a control plane in a temp dir of its own, stopped and removed when the test ends: for
 * tests that delete CRDs or install Mooring itself, which the shared planes must not see.
 */
export async function privateControlPlane(
  t: TestContext,
  options: { workloads?: boolean } = {},
): Promise<PrivateControlPlane> {
  const dir = await mkdtemp(join(tmpdir(), 'mooring-private-plane-'));
  const loc = locationAt(dir);
  t.after(async () => {
    await down(loc);
    await rm(dir, { recursive: true, force: true });
  });
  const running = await up(loc, () => {}, options);
  const client = await KubeClient.fromKubeconfig(running.kubeconfig);
  t.after(() => client.close());
  return { kubeconfig: running.kubeconfig, server: running.server, dir, client };
}
