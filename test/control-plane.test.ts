import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { KubeClient, type KubeObject } from '@mooring/runtime';
import { down, locationAt, readCrds, status, up } from '../hack/lib/control-plane.ts';
import { testCluster, testNamespace } from './harness/index.ts';

interface Crd extends KubeObject {
  spec: { names: { kind: string } };
  status?: { conditions?: { type: string; status: string }[] };
}

describe('the local control plane', () => {
  test('serves /version with a real Kubernetes release', async () => {
    const { client } = await testCluster();
    const version = await client.request<{ gitVersion: string; major: string; minor: string }>({
      method: 'GET',
      path: '/version',
    });
    assert.match(version.gitVersion, /^v1\.3\d\.\d+$/);
    assert.equal(version.major, '1');
  });

  test('reads back a ConfigMap written with server-side apply', async (t) => {
    const { client } = await testCluster();
    const namespace = await testNamespace(t, 'ssa');
    const cm = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'settings', namespace },
      data: { replicas: '3' },
    };
    await client.apply(cm, { fieldManager: 'mooring-test' });
    const live = await client.get<KubeObject & { data: Record<string, string> }>({
      ...cm,
      name: 'settings',
      namespace,
    });
    assert.deepEqual(live.data, { replicas: '3' });
    const managers = (live.metadata.managedFields as { manager: string; operation: string }[]).map(
      (f) => f.manager,
    );
    assert.deepEqual(managers, ['mooring-test']);
  });

  test('has every CRD in config/crds/ installed and Established', async () => {
    const { client } = await testCluster();
    const crds = readCrds();
    assert.ok(crds.length > 0, 'config/crds/ holds no CustomResourceDefinition: run npm run gen-crds');
    for (const crd of crds) {
      const live = await client.get<Crd>({
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        name: crd.metadata.name!,
      });
      const established = live.status?.conditions?.find((c) => c.type === 'Established');
      assert.equal(established?.status, 'True', `${crd.metadata.name} is not Established`);
    }
  });

  test('starts again after a run that crashed and left stale pids and data behind', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mooring-cp-'));
    const loc = locationAt(dir);
    try {
      const first = await up(loc);
      assert.equal(first.reused, false);
      // Kill both without letting them clean up, as a crash or a killed session would.
      process.kill(first.apiserverPid, 'SIGKILL');
      process.kill(first.etcdPid, 'SIGKILL');
      assert.equal(await status(loc), undefined);

      const second = await up(loc);
      assert.equal(second.reused, false);
      assert.notEqual(second.apiserverPid, first.apiserverPid);
      const client = await KubeClient.fromKubeconfig(second.kubeconfig);
      try {
        const ns = await client.list('v1', 'Namespace');
        assert.ok(ns.items.some((n) => n.metadata.name === 'default'));
      } finally {
        client.close();
      }
      assert.equal((await up(loc)).reused, true, 'a healthy control plane is reused, not restarted');
    } finally {
      await down(loc);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
