// The fault suite's outages: the Git server, the artifact server and the API server go away
// (connections refused, 500 answers, requests that hang, a restart with a commit made while it
// was down). Through each, what is applied stays applied and the status says what is wrong;
// after each, the cluster converges to the last commit. Times to converge are reported as
// diagnostics, never asserted.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, type TestContext, test } from 'node:test';
import { KUSTOMIZE_API_VERSION, SOURCE_API_VERSION } from '@mooring/api';
import { kustomizeOperator } from '@mooring/kustomize-operator';
import type { KubeClient, KubeObject } from '@mooring/runtime';
import { sourceOperator } from '@mooring/source-operator';
import { locationAt, restartApiServer } from '../../hack/lib/control-plane.ts';
import { freePort } from '../../hack/lib/processes.ts';
import {
  GitServer,
  type InProcessOperators,
  privateControlPlane,
  startInProcessOperators,
  type TestRepo,
  testCluster,
  uniqueName,
} from '../harness/index.ts';
import { type FaultMode, FaultProxy } from './fault-proxy.ts';
import { requestReconcile, waitFor } from './kill-trials.ts';

type Status = {
  artifact?: { revision?: string };
  lastAppliedRevision?: string;
  lastAttemptedRevision?: string;
  conditions?: { type: string; status: string; message: string }[];
};
type Obj = KubeObject & { status?: Status; data?: Record<string, string> };

const LIMIT_MS = 90_000;

interface Setup {
  client: KubeClient;
  ns: string;
  repo: TestRepo;
  git: FaultProxy;
  artifacts: FaultProxy;
  version(v: string): Promise<string>;
  get(kind: 'GitRepository' | 'Kustomization'): Promise<Obj>;
  configVersion(): Promise<string | undefined>;
  stop(): Promise<void>;
}

const config = (v: string) => ({
  'app/kustomization.yaml': 'resources: [config.yaml]\n',
  'app/config.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-config\ndata:\n  version: "${v}"\n`,
});

/** A Git server and the artifact server behind fault proxies, both operators, one Kustomization. */
async function setUp(client: KubeClient, kubeconfig: string, sourceInterval = '10m'): Promise<Setup> {
  const ns = uniqueName('outage');
  await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  const server = await GitServer.start();
  const repo = await server.createRepo('platform');
  const git = await FaultProxy.start(new URL(repo.url).origin);
  const storagePort = await freePort();
  const artifacts = await FaultProxy.start(`http://127.0.0.1:${storagePort}`);
  const storage = await mkdtemp(join(tmpdir(), 'mooring-outage-storage-'));
  const operators: InProcessOperators = await startInProcessOperators(
    [sourceOperator(), kustomizeOperator()],
    ns,
    [
      '--storage-path',
      storage,
      '--storage-addr',
      `127.0.0.1:${storagePort}`,
      '--storage-adv-addr',
      artifacts.address,
    ],
    { kubeconfig },
  );
  const first = await repo.commit(config('1'));
  const url = new URL(repo.url);
  url.host = git.address;
  await client.create({
    apiVersion: SOURCE_API_VERSION,
    kind: 'GitRepository',
    metadata: { name: 'platform', namespace: ns },
    spec: { url: url.href, interval: sourceInterval, timeout: '5s', ref: { branch: 'main' } },
  } as KubeObject);
  await client.create({
    apiVersion: KUSTOMIZE_API_VERSION,
    kind: 'Kustomization',
    metadata: { name: 'app', namespace: ns },
    spec: {
      interval: '10m',
      retryInterval: '2s',
      prune: true,
      path: './app',
      sourceRef: { kind: 'GitRepository', name: 'platform' },
    },
  } as KubeObject);
  const setup: Setup = {
    client,
    ns,
    repo,
    git,
    artifacts,
    version: async (v) => repo.commit(config(v)),
    get: (kind) =>
      client.get<Obj>({
        apiVersion: kind === 'Kustomization' ? KUSTOMIZE_API_VERSION : SOURCE_API_VERSION,
        kind,
        namespace: ns,
        name: kind === 'Kustomization' ? 'app' : 'platform',
      }),
    configVersion: async () =>
      (
        await client.getOrUndefined<Obj>({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          namespace: ns,
          name: 'app-config',
        })
      )?.data?.version,
    async stop() {
      await operators.stop();
      await git.close();
      await artifacts.close();
      await server.close();
      await rm(storage, { recursive: true, force: true });
      await client.delete({ apiVersion: 'v1', kind: 'Namespace', name: ns }).catch(() => {});
    },
  };
  await appliedAt(setup, first);
  return setup;
}

function ready(obj: Obj) {
  return obj.status?.conditions?.find((c) => c.type === 'Ready');
}

/** Waits until the Kustomization is Ready at `commit`; returns how long that took. */
async function appliedAt(s: Setup, commit: string): Promise<number> {
  const started = Date.now();
  await waitFor(async () => {
    const k = await s.get('Kustomization');
    return ready(k)?.status === 'True' && !!k.status?.lastAppliedRevision?.endsWith(commit);
  }, LIMIT_MS);
  return Date.now() - started;
}

let setup: Setup;
before(async () => {
  const { client, kubeconfig } = await testCluster();
  setup = await setUp(client, kubeconfig);
});
after(() => setup?.stop());

const faults: FaultMode[] = ['refuse', 'error500', 'hang'];

describe('outages: what is applied stays applied, and the cluster converges after', () => {
  let version = 1;
  for (const mode of faults) {
    test(`Git server ${mode}: the source says so, the last revision keeps running, a commit lands after`, async (t: TestContext) => {
      const applied = (await setup.get('Kustomization')).status?.lastAppliedRevision;
      setup.git.set(mode);
      const during = await setup.version(String(++version));
      await requestReconcile(setup.client, setup.ns, 'GitRepository', 'platform');
      await waitFor(async () => ready(await setup.get('GitRepository'))?.status === 'False', LIMIT_MS);
      const source = await setup.get('GitRepository');
      assert.ok(setup.git.seen[mode] > 0, 'the fault was met');
      assert.ok(ready(source)?.message, 'the failure is explained on the status');
      assert.ok(
        !source.status?.artifact?.revision?.endsWith(during),
        'no artifact from an unreachable server',
      );
      assert.equal((await setup.get('Kustomization')).status?.lastAppliedRevision, applied);
      assert.equal(await setup.configVersion(), String(version - 1), 'the applied config is untouched');

      setup.git.set('pass');
      await requestReconcile(setup.client, setup.ns, 'GitRepository', 'platform');
      const ms = await appliedAt(setup, during);
      assert.equal(await setup.configVersion(), String(version));
      t.diagnostic(`Git ${mode}: converged ${ms} ms after the server came back`);
    });

    test(`artifact server ${mode}: the Kustomization says so, nothing applied is lost, it converges after`, async (t: TestContext) => {
      setup.artifacts.set(mode);
      const during = await setup.version(String(++version));
      await requestReconcile(setup.client, setup.ns, 'GitRepository', 'platform');
      await waitFor(async () => {
        const k = await setup.get('Kustomization');
        if (mode === 'hang') return setup.artifacts.seen.hang > 0;
        return ready(k)?.status === 'False' && /artifact/.test(ready(k)?.message ?? '');
      }, LIMIT_MS);
      assert.equal(await setup.configVersion(), String(version - 1), 'the applied config is untouched');

      setup.artifacts.set('pass');
      const ms = await appliedAt(setup, during);
      assert.equal(await setup.configVersion(), String(version));
      t.diagnostic(`artifact server ${mode}: converged ${ms} ms after it came back`);
    });
  }
});

describe('outages: the API server restarts', () => {
  test('a commit made while the API server is down is applied once it is back', async (t) => {
    const plane = await privateControlPlane(t);
    const s = await setUp(plane.client, plane.kubeconfig, '3s');
    t.after(() => s.stop());
    let during = '';
    await restartApiServer(locationAt(plane.dir), async () => {
      during = await s.version('after-restart');
    });
    const ms = await appliedAt(s, during);
    assert.equal(await s.configVersion(), 'after-restart');
    t.diagnostic(`API server restart: the commit made during the outage applied ${ms} ms after it was back`);
  });
});
