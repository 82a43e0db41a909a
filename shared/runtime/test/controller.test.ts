import assert from 'node:assert/strict';
import { before, describe, type TestContext, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { kubectl, testCluster, testNamespace } from '../../../test/harness/index.ts';
import type { Condition } from '../src/conditions.ts';
import { Controller, REQUESTED_AT_ANNOTATION } from '../src/controller.ts';
import type { KubeClient } from '../src/index.ts';
import {
  eventually,
  installToyCrd,
  silentLogger,
  TOY_FINALIZER,
  type Toy,
  toy,
  toyReconciler,
} from './toy.ts';

let client: KubeClient;
before(async () => {
  client = (await testCluster()).client;
  await installToyCrd(client);
});

/** A controller for the toy kind, scoped to one test's namespace and stopped when the test ends. */
async function startToyController(t: TestContext, namespace: string) {
  const reconciler = toyReconciler();
  const controller = new Controller<Toy>(reconciler, {
    client,
    namespace,
    concurrent: 2,
    log: silentLogger,
    reportingController: 'toy-controller',
    queue: { baseDelayMs: 100, maxDelayMs: 2_000 },
  });
  await controller.start();
  t.after(() => controller.stop(1_000));
  return reconciler.log;
}

const getToy = (namespace: string, name: string) =>
  client.get<Toy>({ apiVersion: 'test.mooring.dev/v1', kind: 'Toy', namespace, name });
const ready = (obj: Toy): Condition | undefined => obj.status?.conditions?.find((c) => c.type === 'Ready');
const condition = (obj: Toy, type: string) => obj.status?.conditions?.find((c) => c.type === type);

describe('Controller with a toy reconciler on the real API server', () => {
  test('requeues at spec.interval', async (t) => {
    const ns = await testNamespace(t, 'requeue');
    const log = await startToyController(t, ns);
    await client.create(toy(ns, 'ticker', { interval: '1s' }));
    const times = await eventually('three reconciles', async () => {
      const ts = log.reconciles.get(`${ns}/ticker`) ?? [];
      return ts.length >= 3 ? ts : undefined;
    });
    const gaps = times.slice(1).map((v, i) => v - times[i]!);
    for (const gap of gaps)
      assert.ok(gap >= 800 && gap < 2_500, `gap ${gap} ms is not about the 1s interval`);
    const live = await getToy(ns, 'ticker');
    assert.equal(ready(live)?.status, 'True');
    assert.equal(live.status?.observedGeneration, live.metadata.generation);
  });

  test('backs off after failures, then recovers and reports Ready', async (t) => {
    const ns = await testNamespace(t, 'backoff');
    const log = await startToyController(t, ns);
    await client.create(toy(ns, 'flaky', { failTimes: 3, interval: '1h' }));
    const live = await eventually('Ready after the failures', async () => {
      const obj = await getToy(ns, 'flaky');
      return ready(obj)?.status === 'True' ? obj : undefined;
    });
    const times = log.reconciles.get(`${ns}/flaky`)!;
    assert.equal(times.length, 4, 'three failures and one success');
    const gaps = times.slice(1).map((v, i) => v - times[i]!);
    // base 100 ms doubling: about 100, 200, 400 (±10% jitter)
    // Compare the first and last gap only: 4x apart, so scheduling noise cannot reorder them.
    assert.ok(gaps[2]! > gaps[0]! + 150, `backoff does not grow: ${gaps.join(', ')} ms`);
    assert.equal(condition(live, 'Reconciling'), undefined);
    assert.equal(live.status?.count, 4);
  });

  test('a stalled object is not retried until its spec changes', async (t) => {
    const ns = await testNamespace(t, 'stalled');
    const log = await startToyController(t, ns);
    await client.create(toy(ns, 'broken', { stall: true }));
    const stalled = await eventually('Stalled', async () => {
      const obj = await getToy(ns, 'broken');
      return condition(obj, 'Stalled')?.status === 'True' ? obj : undefined;
    });
    assert.equal(ready(stalled)?.status, 'False');
    assert.equal(ready(stalled)?.reason, 'InvalidSpec');
    await sleep(1_000);
    assert.equal(log.reconciles.get(`${ns}/broken`)?.length, 1, 'a stalled object was retried');

    await client.mergePatch(
      { apiVersion: 'test.mooring.dev/v1', kind: 'Toy', namespace: ns, name: 'broken' },
      {
        spec: { stall: false },
      },
    );
    const fixed = await eventually('Ready after the fix', async () => {
      const obj = await getToy(ns, 'broken');
      return ready(obj)?.status === 'True' ? obj : undefined;
    });
    assert.equal(condition(fixed, 'Stalled'), undefined);
  });

  test('adds its finalizer and cleans up on delete', async (t) => {
    const ns = await testNamespace(t, 'finalizer');
    const log = await startToyController(t, ns);
    await client.create(toy(ns, 'doomed'));
    await eventually('finalizer added', async () =>
      (await getToy(ns, 'doomed')).metadata.finalizers?.includes(TOY_FINALIZER),
    );
    await client.delete({ apiVersion: 'test.mooring.dev/v1', kind: 'Toy', namespace: ns, name: 'doomed' });
    await eventually(
      'object gone',
      async () =>
        (await client.getOrUndefined({
          apiVersion: 'test.mooring.dev/v1',
          kind: 'Toy',
          namespace: ns,
          name: 'doomed',
        })) === undefined,
    );
    assert.deepEqual(log.finalized, [`${ns}/doomed`]);
  });

  test('requestedAt triggers an immediate reconcile and is echoed in status', async (t) => {
    const ns = await testNamespace(t, 'requested');
    const log = await startToyController(t, ns);
    await client.create(toy(ns, 'lazy', { interval: '1h' }));
    await eventually('first reconcile', async () => ready(await getToy(ns, 'lazy'))?.status === 'True');
    const stamp = new Date().toISOString();
    await client.mergePatch(
      { apiVersion: 'test.mooring.dev/v1', kind: 'Toy', namespace: ns, name: 'lazy' },
      {
        metadata: { annotations: { [REQUESTED_AT_ANNOTATION]: stamp } },
      },
    );
    const live = await eventually(
      'lastHandledReconcileAt',
      async () => {
        const obj = await getToy(ns, 'lazy');
        return obj.status?.lastHandledReconcileAt === stamp ? obj : undefined;
      },
      3_000,
    );
    assert.equal(log.reconciles.get(`${ns}/lazy`)?.length, 2);
    assert.equal(live.status?.count, 2);
  });

  test('a suspended object is not reconciled until resumed', async (t) => {
    const ns = await testNamespace(t, 'suspend');
    const log = await startToyController(t, ns);
    await client.create(toy(ns, 'paused', { suspend: true }));
    await sleep(1_000);
    assert.equal(log.reconciles.get(`${ns}/paused`), undefined);
    await client.mergePatch(
      { apiVersion: 'test.mooring.dev/v1', kind: 'Toy', namespace: ns, name: 'paused' },
      {
        spec: { suspend: false },
      },
    );
    await eventually('Ready after resume', async () => ready(await getToy(ns, 'paused'))?.status === 'True');
  });

  test('kubectl wait --for=condition=Ready sees the Ready condition', async (t) => {
    const ns = await testNamespace(t, 'kubectl-wait');
    await startToyController(t, ns);
    await client.create(toy(ns, 'waited', { workMs: 500, message: 'all good' }));
    const stdout = await kubectl('-n', ns, 'wait', '--for=condition=Ready', 'toy/waited', '--timeout=20s');
    assert.match(stdout, /toy.test.mooring.dev\/waited condition met/);
  });
});
