// The source and kustomize operators in this test process on the control plane with workloads
// (Deployments roll out, Jobs complete on kwok's fake nodes), watching one namespace, fed by a real
// Git smart-HTTP server; helpers for HelmReleases and the fixture chart.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { HELM_API_VERSION, SOURCE_API_VERSION } from '@mooring/api';
import type { KubeClient, KubeObject, MooringObject } from '@mooring/runtime';
import { sourceOperator } from '@mooring/source-operator';
import {
  eventually,
  GitServer,
  startInProcessOperators,
  type TestRepo,
  testCluster,
  uniqueName,
} from '@mooring/test/harness';
import { kustomizeOperator } from '../src/kustomize-operator.ts';

export const CHART_DIR = join(import.meta.dirname, 'testdata/charts/probe');

export interface HelmStack {
  namespace: string;
  client: KubeClient;
  kubeconfig: string;
  git: GitServer;
  stop(): Promise<void>;
}

export async function startHelmStack(prefix: string): Promise<HelmStack> {
  const { client, kubeconfig } = await testCluster({ workloads: true });
  const namespace = uniqueName(prefix);
  await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  const git = await GitServer.start();
  const storage = await mkdtemp(join(tmpdir(), 'mooring-storage-'));
  const operators = await startInProcessOperators(
    [sourceOperator(), kustomizeOperator()],
    namespace,
    ['--storage-path', storage, '--storage-addr', '127.0.0.1:0', '--requeue-dependency', '2s'],
    { kubeconfig },
  );
  return {
    namespace,
    client,
    kubeconfig,
    git,
    async stop() {
      await operators.stop();
      await git.close();
      await rm(storage, { recursive: true, force: true });
      await client.delete({ apiVersion: 'v1', kind: 'Namespace', name: namespace }).catch(() => {});
    },
  };
}

/** The fixture chart's files under `charts/probe/`, with `overrides` (path relative to the chart) replacing some. */
export function chartFiles(overrides: Record<string, string> = {}): Record<string, string> {
  const files: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else files[`charts/probe/${relative(CHART_DIR, path)}`] = readFileSync(path, 'utf8');
    }
  };
  walk(CHART_DIR);
  for (const [k, v] of Object.entries(overrides)) files[`charts/probe/${k}`] = v;
  return files;
}

/** A repository holding the chart and a GitRepository pointing at it. */
export async function chartRepo(stack: HelmStack): Promise<{ repo: TestRepo; name: string }> {
  const name = uniqueName('charts');
  const repo = await stack.git.createRepo(name);
  await repo.commit(chartFiles());
  await stack.client.create({
    apiVersion: SOURCE_API_VERSION,
    kind: 'GitRepository',
    metadata: { name, namespace: stack.namespace },
    spec: { url: repo.url, interval: '10m', ref: { branch: 'main' } },
  } as KubeObject);
  return { repo, name };
}

export interface HelmReleaseObject extends MooringObject {
  status?: MooringObject['status'] & {
    history?: {
      version: number;
      status: string;
      chartVersion: string;
      configDigest: string;
      digest: string;
    }[];
    inventory?: { entries: { id: string; v: string }[] };
    helmChart?: string;
    lastAttemptedRevision?: string;
    upgradeFailures?: number;
  };
}

export const hrKey = (namespace: string, name: string) => ({
  apiVersion: HELM_API_VERSION,
  kind: 'HelmRelease',
  namespace,
  name,
});

export function condition(obj: MooringObject | undefined, type: string) {
  return obj?.status?.conditions?.find((c) => c.type === type);
}

/** Waits for Ready=`status` at the current generation and `when`; the error carries the last status. */
export async function waitForHelmRelease(
  stack: HelmStack,
  name: string,
  status: 'True' | 'False',
  when: (o: HelmReleaseObject) => boolean = () => true,
  timeoutMs = 60_000,
): Promise<HelmReleaseObject> {
  let last: HelmReleaseObject | undefined;
  try {
    return await eventually(
      `HelmRelease ${name} Ready=${status}`,
      async () => {
        last = await stack.client.get<HelmReleaseObject>(hrKey(stack.namespace, name));
        const ready = condition(last, 'Ready');
        return ready?.status === status && ready.observedGeneration === last.metadata.generation && when(last)
          ? last
          : undefined;
      },
      timeoutMs,
    );
  } catch (err) {
    throw new Error(`${(err as Error).message}; last status: ${JSON.stringify(last?.status)}`);
  }
}

export async function requestReconcile(stack: HelmStack, apiVersion: string, kind: string, name: string) {
  await stack.client.mergePatch(
    { apiVersion, kind, namespace: stack.namespace, name },
    { metadata: { annotations: { 'reconcile.mooring.dev/requestedAt': `${Date.now()}-${Math.random()}` } } },
  );
}

/** The HelmRelease `spec.chart` for the fixture chart in `source`. */
export const chartSpec = (source: string) => ({
  spec: { chart: './charts/probe', sourceRef: { kind: 'GitRepository', name: source }, interval: '10m' },
});
