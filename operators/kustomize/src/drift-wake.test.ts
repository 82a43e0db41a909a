// Drift wakes its owner: ManagedVersions' watch on the in-memory API server of
// test/simulation/fake-api-server.ts (a fake, for unit tests only; the real API server's case is in
// operators/kustomize/test/kustomization.test.ts), with the queue recorded.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KUSTOMIZE_NAME_LABEL, KUSTOMIZE_NAMESPACE_LABEL } from '@mooring/api';
import { KubeClient, type KubeObject } from '@mooring/runtime';
import { FakeApiServer, FakeApiTransport } from '../../../test/simulation/fake-api-server.ts';
import { type KnownVersion, knownVersionId } from './apply/apply-set.ts';
import { ManagedVersions } from './apply/managed-versions.ts';
import { DRIFT_WAKE_EVERY_MS, wakeOwnersOnDrift } from './drift-wake.ts';

const NS = 'apps';
const owner = { [KUSTOMIZE_NAME_LABEL]: 'app', [KUSTOMIZE_NAMESPACE_LABEL]: NS };

async function until(what: string, cond: () => boolean): Promise<void> {
  for (let i = 0; i < 2_000 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(cond(), `${what}: not within 10 s`);
}

async function setUp() {
  const server = new FakeApiServer({ now: () => Date.now() });
  const client = new KubeClient(new FakeApiTransport(server), { qps: 1e9, burst: 1e9, userAgent: 'test' });
  await client.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } } as KubeObject, {
    fieldManager: 'test',
  });
  const versions = new ManagedVersions(client, {
    labelSelector: KUSTOMIZE_NAME_LABEL,
    ownerLabels: [KUSTOMIZE_NAME_LABEL, KUSTOMIZE_NAMESPACE_LABEL],
  });
  const known = new Map<string, KnownVersion>();
  const knownVersions = new Map([[`${NS}/app`, known]]);
  const woken: string[] = [];
  let now = 1_000_000;
  const wakes = wakeOwnersOnDrift(
    versions,
    knownVersions,
    { add: (key) => woken.push(`now ${key}`), addAfter: (key, ms) => woken.push(`after ${ms} ${key}`) },
    () => now,
  );
  /** Applies as Mooring does, and remembers the version as the apply step does. */
  const applyOurs = async (obj: KubeObject) => {
    const out = await client.apply(
      { ...obj, metadata: { ...obj.metadata, namespace: NS, labels: owner } } as KubeObject,
      { fieldManager: 'mooring', force: true },
    );
    const id = knownVersionId({ namespace: NS, name: obj.metadata.name ?? '', kind: obj.kind });
    known.set(id, { version: out.metadata.resourceVersion ?? '', payloadHash: 'h', readAt: now });
    return out;
  };
  const watching = async (obj: KubeObject) => {
    versions.follow(obj);
    const ref = { apiVersion: obj.apiVersion, kind: obj.kind, namespace: NS, name: obj.metadata.name ?? '' };
    const at = (await client.get(ref)).metadata.resourceVersion;
    await until('the watch listed it', () => versions.versionOf(ref) === at);
  };
  /** Until every change heard so far has been judged. */
  const judged = () => until('changes judged', () => wakes.judging() === 0);
  return { client, versions, woken, applyOurs, watching, judged, advance: (ms: number) => (now += ms) };
}

const configMap = (data: Record<string, string>) =>
  ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings' }, data }) as KubeObject;

test('an edit by someone else wakes the owner at once; another within 5 s wakes it after the rest of them', async () => {
  const w = await setUp();
  try {
    await w.applyOurs(configMap({ mode: 'git' }));
    await w.watching(configMap({}));
    await w.client.apply(
      { ...configMap({ mode: 'edited' }), metadata: { name: 'settings', namespace: NS } },
      {
        fieldManager: 'kubectl',
        force: true,
      },
    );
    await until('woken', () => w.woken.length === 1);
    assert.deepEqual(w.woken, [`now ${NS}/app`]);
    w.advance(2_000);
    await w.client.apply(
      { ...configMap({ mode: 'again' }), metadata: { name: 'settings', namespace: NS } },
      {
        fieldManager: 'kubectl',
        force: true,
      },
    );
    await until('woken again', () => w.woken.length === 2);
    assert.equal(w.woken[1], `after ${DRIFT_WAKE_EVERY_MS - 2_000} ${NS}/app`);
  } finally {
    await w.versions.close();
  }
});

test('a delete wakes the owner; a status write, our own write and an object nobody here applied do not', async () => {
  const w = await setUp();
  try {
    const deployment = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: { containers: [{ name: 'web', image: 'nginx' }] },
        },
      },
    } as KubeObject;
    await w.applyOurs(deployment);
    await w.watching(deployment);
    // Applied by another process (another shard): this one knows nothing of it.
    await w.client.apply(
      { ...configMap({ a: '1' }), metadata: { name: 'elsewhere', namespace: NS, labels: owner } },
      { fieldManager: 'mooring', force: true },
    );
    await w.watching({ ...configMap({}), metadata: { name: 'elsewhere' } });
    const edited = await w.client.apply(
      { ...configMap({ a: '2' }), metadata: { name: 'elsewhere', namespace: NS } } as KubeObject,
      { fieldManager: 'kubectl', force: true },
    );
    await w.client.applyStatus(
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'web', namespace: NS },
        status: { observedGeneration: 1, replicas: 3 },
      } as KubeObject,
      { fieldManager: 'kube-controller-manager', force: true },
    );
    const ours = await w.applyOurs({
      ...deployment,
      spec: { ...(deployment.spec as object), replicas: 2 },
    } as KubeObject);
    // The rollout that follows our write: a status write after it, a newer version than ours.
    const rolled = await w.client.applyStatus(
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'web', namespace: NS },
        status: { observedGeneration: ours.metadata.generation, replicas: 2 },
      } as KubeObject,
      { fieldManager: 'kube-controller-manager', force: true },
    );
    const web = { apiVersion: 'apps/v1', kind: 'Deployment', namespace: NS, name: 'web' };
    const elsewhere = { apiVersion: 'v1', kind: 'ConfigMap', namespace: NS, name: 'elsewhere' };
    await until(
      'the watch saw every write',
      () =>
        w.versions.versionOf(web) === rolled.metadata.resourceVersion &&
        w.versions.versionOf(elsewhere) === edited.metadata.resourceVersion,
    );
    await w.judged();
    assert.deepEqual(w.woken, [], 'nothing drifted yet');
    await w.client.delete({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: NS, name: 'web' });
    await until('woken by the delete', () => w.woken.length > 0);
    // Our own write (its version remembered once its answer came back) and the status writes do not.
    assert.deepEqual(w.woken, [`now ${NS}/app`]);
  } finally {
    await w.versions.close();
  }
});
