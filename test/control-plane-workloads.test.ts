import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { computeStatus, type StatusResult } from '@mooring/kstatus';
import { KubeClient, type KubeObject } from '@mooring/runtime';
import {
  type ControlPlaneLocation,
  down,
  FAKE_NODES,
  locationAt,
  type Running,
  repoRoot,
  status,
  up,
} from '../hack/lib/control-plane.ts';
import { isOurProcess } from '../hack/lib/processes.ts';
import { eventually, uniqueName } from './harness/index.ts';

// Each plane here lives in a temp dir of its own, so the suite's shared planes are never touched.
const log = (line: string) => console.error(`  control-plane: ${line}`);

function deployment(namespace: string, name: string, podSpec: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'app', image: 'registry.invalid/app:1' }], ...podSpec },
      },
    },
  };
}

async function statusOf(client: KubeClient, obj: KubeObject): Promise<StatusResult> {
  const live = await client.get({
    apiVersion: obj.apiVersion,
    kind: obj.kind,
    namespace: obj.metadata.namespace,
    name: obj.metadata.name!,
  });
  return computeStatus(live as unknown as Record<string, unknown>);
}

describe('a control plane with workloads (kube-controller-manager, kube-scheduler, kwok)', () => {
  let dir: string;
  let loc: ControlPlaneLocation;
  let running: Running;
  let client: KubeClient;
  let namespace: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mooring-cp-workloads-'));
    loc = locationAt(dir);
    running = await up(loc, log, { workloads: true });
    client = await KubeClient.fromKubeconfig(running.kubeconfig);
    namespace = uniqueName('workloads');
    await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  });

  after(async () => {
    client?.close();
    if (loc) await down(loc);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('reports its workload processes and Ready fake Nodes', async () => {
    assert.equal(running.reused, false);
    assert.equal(running.workloadsRunning, true);
    const nodes = await client.list('v1', 'Node');
    assert.deepEqual(nodes.items.map((n) => n.metadata.name).sort(), [...FAKE_NODES]);
  });

  test('a Deployment of 2 replicas becomes Available (kstatus Current)', async () => {
    const web = deployment(namespace, 'web');
    await client.create(web);
    const result = await eventually(
      'the Deployment to be Current',
      async () => {
        const s = await statusOf(client, web);
        assert.equal(s.status, 'Current', s.message);
        return s;
      },
      30_000,
    );
    assert.match(result.message, /Replicas: 2/);
    const pods = await client.list('v1', 'Pod', { namespace, labelSelector: 'app=web' });
    assert.equal(pods.items.length, 2);
    for (const pod of pods.items) {
      const spec = pod.spec as { nodeName?: string };
      assert.ok(FAKE_NODES.includes(spec.nodeName ?? ''), `pod ${pod.metadata.name} is not on a fake Node`);
      assert.equal(computeStatus(pod as unknown as Record<string, unknown>).status, 'Current');
    }
  });

  test('a Deployment whose pods can never schedule stays InProgress', async () => {
    const stuck = deployment(namespace, 'stuck', { nodeSelector: { 'mooring.dev/no-such-node': 'true' } });
    await client.create(stuck);
    // Wait until the scheduler has looked at (and rejected) its pods, so InProgress means "stuck".
    await eventually(
      'both pods to be found unschedulable',
      async () => {
        const pods = await client.list('v1', 'Pod', { namespace, labelSelector: 'app=stuck' });
        assert.equal(pods.items.length, 2);
        for (const pod of pods.items) {
          const conditions = (pod.status as { conditions?: { type: string; reason?: string }[] }).conditions;
          assert.ok(conditions?.some((c) => c.type === 'PodScheduled' && c.reason === 'Unschedulable'));
        }
        // The Deployment controller has counted them too; before that kstatus says LessReplicas.
        const live = await client.get<KubeObject & { status?: { replicas?: number } }>({
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          namespace,
          name: 'stuck',
        });
        assert.equal(live.status?.replicas, 2);
        return true;
      },
      30_000,
    );
    const result = await statusOf(client, stuck);
    assert.equal(result.status, 'InProgress');
    assert.equal(result.reason, 'LessAvailable');
  });

  test('a Job runs to completion (kstatus Current)', async () => {
    const job: KubeObject = {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'migrate', namespace },
      spec: {
        template: {
          spec: {
            restartPolicy: 'Never',
            containers: [{ name: 'migrate', image: 'registry.invalid/migrate:1' }],
          },
        },
      },
    };
    await client.create(job);
    const result = await eventually(
      'the Job to complete',
      async () => {
        const s = await statusOf(client, job);
        assert.equal(s.status, 'Current', s.message);
        return s;
      },
      30_000,
    );
    assert.equal(result.message, 'Job Completed. succeeded: 1/1');
  });

  test('a deleted namespace finishes terminating', async () => {
    const gone = uniqueName('gone');
    await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: gone } });
    await client.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'settings', namespace: gone },
      data: { a: '1' },
    });
    await client.delete({ apiVersion: 'v1', kind: 'Namespace', name: gone });
    await eventually(
      'the namespace to be gone',
      async () =>
        (await client.getOrUndefined({ apiVersion: 'v1', kind: 'Namespace', name: gone })) === undefined,
      30_000,
    );
  });
});

describe('up --with-workloads on a plane started without them', () => {
  test('adds the workload processes, and down stops every one of them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mooring-cp-upgrade-'));
    const loc = locationAt(dir);
    try {
      const plain = await up(loc, log);
      assert.equal(plain.workloadsRunning, false);
      assert.ok(plain.apiserverArgs.includes('--disable-admission-plugins=ServiceAccount'));

      const upgraded = await up(loc, log, { workloads: true });
      assert.equal(upgraded.reused, true);
      assert.equal(upgraded.workloadsRunning, true);
      assert.equal(upgraded.etcdPid, plain.etcdPid, 'etcd (and its data) is kept');
      assert.equal(upgraded.apiPort, plain.apiPort, 'the kubeconfig stays valid');
      assert.ok(!upgraded.apiserverArgs.includes('--disable-admission-plugins=ServiceAccount'));
      assert.equal((await up(loc, log, { workloads: true })).reused, true);

      const w = upgraded.workloads!;
      const pids: [number, string][] = [
        [w.kcmPid, 'kube-controller-manager'],
        [w.schedulerPid, 'kube-scheduler'],
        [w.kwokPid, 'kwok'],
      ];
      await down(loc);
      for (const [pid, name] of pids) {
        assert.equal(isOurProcess(pid, join(repoRoot, 'bin', name)), false, `${name} still runs`);
      }
      assert.equal(await status(loc), undefined);
    } finally {
      await down(loc);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
