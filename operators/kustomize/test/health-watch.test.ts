// A health wait on this cluster follows one shared watch instead of reading the object again and
// again, on the real API server (no kube-controller-manager here: the test writes the Deployment's
// status itself, as the deployment controller would).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { KubeClient, KubeObject } from '@mooring/runtime';
import { testCluster, testNamespace } from '@mooring/test/harness';
import { waitForHealth } from '../src/health.ts';
import { HealthWatches } from '../src/health-watch.ts';

const deployment = (name: string, namespace: string): KubeObject =>
  ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name, image: 'nginx' }] } },
    },
  }) as KubeObject;

const available = {
  observedGeneration: 1,
  replicas: 1,
  updatedReplicas: 1,
  readyReplicas: 1,
  availableReplicas: 1,
  conditions: [
    { type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable', message: 'ok' },
    { type: 'Progressing', status: 'True', reason: 'NewReplicaSetAvailable', message: 'rolled out' },
  ],
};

/** Counts the client's GETs of one object, the reads a polling wait would make. */
function countGets(client: KubeClient, name: string): { count: number; restore: () => void } {
  const counter = { count: 0, restore: () => {} };
  const get = client.get.bind(client);
  client.get = ((key, impersonate) => {
    if (key.name === name) counter.count++;
    return get(key, impersonate);
  }) as KubeClient['get'];
  counter.restore = () => {
    client.get = get;
  };
  return counter;
}

test('a health wait ends on the watch event of the rollout, reading the object at most once per 5 s', async (t) => {
  const { client } = await testCluster();
  const namespace = await testNamespace(t, 'health-watch');
  const watches = new HealthWatches(client);
  t.after(() => watches.close());
  await client.create(deployment('web', namespace));
  const ref = { apiVersion: 'apps/v1', kind: 'Deployment', namespace, name: 'web' };
  const gets = countGets(client, 'web');
  t.after(() => gets.restore());

  const started = Date.now();
  const waiting = waitForHealth(client, [ref], {
    timeoutMs: 600_000,
    signal: new AbortController().signal,
    watches,
  });
  // A second of not-ready: a polling wait reads five times in it (100 ms, then 1.5× longer).
  await new Promise((r) => setTimeout(r, 1_000));
  await client.mergePatch(ref, { status: available }, 'status');
  const verdict = await waiting;
  const elapsedS = (Date.now() - started) / 1000;

  assert.deepEqual(verdict, { healthy: true, failed: false, message: 'all objects are healthy' });
  // One read when the wait began (the cache may lack the object), one per safety interval after.
  const allowed = 1 + Math.floor(elapsedS / 5);
  assert.ok(
    gets.count <= allowed,
    `${gets.count} reads in ${elapsedS.toFixed(1)} s; at most ${allowed} expected`,
  );
});

test('without shared watches the wait reads the object until it is ready', async (t) => {
  const { client } = await testCluster();
  const namespace = await testNamespace(t, 'health-poll');
  await client.create(deployment('api', namespace));
  const ref = { apiVersion: 'apps/v1', kind: 'Deployment', namespace, name: 'api' };
  const gets = countGets(client, 'api');
  t.after(() => gets.restore());
  const waiting = waitForHealth(client, [ref], { timeoutMs: 600_000, signal: new AbortController().signal });
  // The baseline the first test is measured against: a polling wait reads again and again.
  while (gets.count < 3) await new Promise((r) => setTimeout(r, 50));
  await client.mergePatch(ref, { status: available }, 'status');
  assert.equal((await waiting).healthy, true);
});
