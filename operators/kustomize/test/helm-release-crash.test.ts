// kill -9 of the operator process in the middle of an upgrade, for real: the source and kustomize
// operators run as one OS process from the bundle the image ships (test/fault/operator-child.ts),
// an upgrade waits on Pods that cannot schedule, the process is killed with its record v2 still
// pending-upgrade, the values are fixed, and a fresh process must recover: v2 failed (interrupted),
// v3 deployed, nothing applied before lost, and `helm history` agreeing.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { HELM_API_VERSION } from '@mooring/api';
import { ReleaseStore } from '@mooring/helm';
import type { KubeObject } from '@mooring/runtime';
import { eventually, GitServer, testCluster, uniqueName } from '@mooring/test/harness';
import { type OperatorChild, startOperatorChild } from '../../../test/fault/operator-child.ts';
import { fromEntry } from '../src/inventory.ts';
import {
  chartRepo,
  chartSpec,
  condition,
  type HelmStack,
  hrKey,
  waitForHelmRelease,
} from './helm-release-fixture.ts';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '../../..');
const HELM = join(ROOT, 'bin/helm');
// The bundle finds no renderer beside itself (the image sets this too).
process.env.MOORING_HELM_WASM ??= join(ROOT, 'bin/mooring-helm.wasm');

/** A port free now, kept for both processes: the artifact URLs in the sources' status stay valid. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

let stack: HelmStack;
let storage: string;
let storagePort: number;
let operator: OperatorChild | undefined;

const startOperators = () =>
  startOperatorChild(stack.kubeconfig, stack.namespace, 'source,kustomize', [
    '--storage-path',
    storage,
    '--storage-addr',
    `127.0.0.1:${storagePort}`,
  ]);

before(async () => {
  const { client, kubeconfig } = await testCluster({ workloads: true });
  const namespace = uniqueName('hr-crash');
  await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  const git = await GitServer.start();
  storage = await mkdtemp(join(tmpdir(), 'mooring-storage-'));
  storagePort = await freePort();
  stack = {
    namespace,
    client,
    kubeconfig,
    git,
    async stop() {
      await operator?.kill();
      await git.close();
      await rm(storage, { recursive: true, force: true });
      await client.delete({ apiVersion: 'v1', kind: 'Namespace', name: namespace }).catch(() => {});
    },
  };
});
after(() => stack?.stop());

test('kill -9 mid-upgrade: a fresh process marks v2 failed, releases v3, and loses nothing', async () => {
  const ns = stack.namespace;
  const name = uniqueName('crash');
  const key = hrKey(ns, name);
  const store = new ReleaseStore(stack.client, { namespace: ns });
  const source = await chartRepo(stack);
  operator = await startOperators();
  await stack.client.create({
    apiVersion: HELM_API_VERSION,
    kind: 'HelmRelease',
    metadata: { name, namespace: ns },
    spec: { interval: '10m', timeout: '10m', chart: chartSpec(source.name), values: { greeting: 'v1' } },
  } as KubeObject);
  const installed = await waitForHelmRelease(
    stack,
    name,
    'True',
    (o) => o.status?.history?.[0]?.version === 1,
    240_000,
  );
  const installedIds = (installed.status?.inventory?.entries ?? []).map((e) => e.id).sort();
  assert.ok(installedIds.length > 0, 'v1 recorded its objects in the inventory');

  // v2's Pods can never schedule: the health wait would last the ten-minute timeout.
  await stack.client.mergePatch(key, { spec: { values: { greeting: 'v2', unschedulable: true } } });
  await eventually(
    'v2 pending-upgrade',
    async () => {
      const latest = await store.latest(name);
      return latest?.version === 2 && latest.info.status === 'pending-upgrade';
    },
    240_000,
  );
  await operator.kill();
  assert.equal((await store.latest(name))?.info.status, 'pending-upgrade', 'the process died mid-upgrade');

  await stack.client.mergePatch(key, { spec: { values: { greeting: 'v3', unschedulable: false } } });
  operator = await startOperators();
  const recovered = await waitForHelmRelease(
    stack,
    name,
    'True',
    (o) => o.status?.history?.[0]?.version === 3,
    300_000,
  );

  const history = await store.history(name);
  assert.deepEqual(
    history.map((r) => [r.version, r.info.status]),
    [
      [1, 'superseded'],
      [2, 'failed'],
      [3, 'deployed'],
    ],
  );
  assert.match(history[1]!.info.description ?? '', /^Release interrupted: pending-upgrade of version 2/);
  assert.equal(condition(recovered, 'Ready')?.status, 'True');

  // Nothing applied before is lost: every object v1 listed is there and still in the inventory.
  const ids = (recovered.status?.inventory?.entries ?? []).map((e) => e.id);
  for (const id of installedIds) assert.ok(ids.includes(id), `${id} still in the inventory`);
  for (const entry of recovered.status?.inventory?.entries ?? []) {
    const ref = fromEntry(entry);
    const live = await stack.client.getOrUndefined({ ...ref, namespace: ref.namespace || undefined });
    assert.ok(live, `${entry.id} exists`);
  }
  const config = await stack.client.get<KubeObject & { data?: Record<string, string> }>({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    namespace: ns,
    name: `${name}-config`,
  });
  assert.equal(config.data?.greeting, 'v3');

  const { stdout } = await run(HELM, [
    'history',
    name,
    '-n',
    ns,
    '--kubeconfig',
    stack.kubeconfig,
    '-o',
    'json',
  ]);
  const helm = JSON.parse(stdout) as { revision: number; status: string; description: string }[];
  assert.deepEqual(
    helm.map((r) => [r.revision, r.status]),
    [
      [1, 'superseded'],
      [2, 'failed'],
      [3, 'deployed'],
    ],
  );
  assert.match(helm[1]!.description, /interrupted/);
});
