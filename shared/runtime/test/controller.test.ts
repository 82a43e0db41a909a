import assert from 'node:assert/strict';
import { once } from 'node:events';
import { before, describe, type TestContext, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { kubectl, testCluster, testNamespace } from '@mooring/test/harness';
import type { Condition } from '../src/conditions.ts';
import { Controller, REQUESTED_AT_ANNOTATION } from '../src/controller.ts';
import type { KubeClient } from '../src/index.ts';
import { Metrics } from '../src/metrics.ts';
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

/** What the controller asked its work queue for, by key: requeue delays, and retries with the failures counted before each. */
interface QueueRequests {
  delays: Map<string, number[]>;
  retries: Map<string, number[]>;
}

const BASE_DELAY_MS = 100;

/** A controller of `reconciler` on the toy kind in `namespace`, one worker, stopped when the test ends. */
async function startWith(
  t: TestContext,
  reconciler: ReturnType<typeof toyReconciler>,
  namespace: string,
  options: Partial<ConstructorParameters<typeof Controller<Toy>>[1]> = {},
): Promise<Controller<Toy>> {
  const controller = new Controller<Toy>(reconciler, {
    client,
    namespace,
    concurrent: 1,
    log: silentLogger,
    reportingController: 'toy-controller',
    ...options,
  });
  await controller.start();
  t.after(() => controller.stop(1_000));
  return controller;
}

/** A controller for the toy kind, scoped to one test's namespace and stopped when the test ends. */
async function startToyController(
  t: TestContext,
  namespace: string,
  requests?: QueueRequests,
  metrics?: Metrics,
) {
  const reconciler = toyReconciler();
  const controller = new Controller<Toy>(reconciler, {
    client,
    namespace,
    metrics,
    concurrent: 2,
    log: silentLogger,
    reportingController: 'toy-controller',
    queue: { baseDelayMs: BASE_DELAY_MS, maxDelayMs: 2_000 },
  });
  if (requests) {
    // Counted, not timed: the delays the controller asks for are exact, the wall clock under load is not.
    const queue = controller.queue;
    const push = (m: Map<string, number[]>, key: string, v: number) => m.set(key, [...(m.get(key) ?? []), v]);
    const addAfter = queue.addAfter.bind(queue);
    queue.addAfter = (key, ms) => {
      push(requests.delays, key, ms);
      addAfter(key, ms);
    };
    const addRateLimited = queue.addRateLimited.bind(queue);
    queue.addRateLimited = (key) => {
      push(requests.retries, key, queue.failures(key));
      addRateLimited(key);
    };
  }
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
    const requests: QueueRequests = { delays: new Map(), retries: new Map() };
    const log = await startToyController(t, ns, requests);
    await client.create(toy(ns, 'ticker', { interval: '1s' }));
    const key = `${ns}/ticker`;
    const times = await eventually(
      'three reconciles',
      async () => {
        const ts = log.reconciles.get(key) ?? [];
        return ts.length >= 3 ? ts : undefined;
      },
      30_000,
    );
    // Each success asked for the 1 s interval, with the controller's ±5% jitter.
    const delays = requests.delays.get(key) ?? [];
    assert.ok(delays.length >= 2, `requeues asked for: ${delays.join(', ')}`);
    for (const ms of delays)
      assert.ok(ms >= 950 && ms <= 1_050, `requeue after ${ms} ms, not the 1s interval`);
    // A lower bound only, which load cannot break: no reconcile came before its interval was up.
    const gaps = times.slice(1).map((v, i) => v - times[i]!);
    for (const gap of gaps) assert.ok(gap >= 950 - 10, `gap ${gap} ms is shorter than the 1s interval`);
    const live = await getToy(ns, 'ticker');
    assert.equal(ready(live)?.status, 'True');
    assert.equal(live.status?.observedGeneration, live.metadata.generation);
  });

  test('backs off after failures, then recovers and reports Ready', async (t) => {
    const ns = await testNamespace(t, 'backoff');
    const requests: QueueRequests = { delays: new Map(), retries: new Map() };
    const log = await startToyController(t, ns, requests);
    await client.create(toy(ns, 'flaky', { failTimes: 3, interval: '1h' }));
    const live = await eventually('Ready after the failures', async () => {
      const obj = await getToy(ns, 'flaky');
      return ready(obj)?.status === 'True' ? obj : undefined;
    });
    const times = log.reconciles.get(`${ns}/flaky`)!;
    assert.equal(times.length, 4, 'three failures and one success');
    // Each failure was retried through the backoff, with one more failure counted each time:
    // base 100 ms doubling, so 100, 200 and 400 ms (±10% jitter).
    assert.deepEqual(requests.retries.get(`${ns}/flaky`), [0, 1, 2]);
    // Lower bounds only, which load cannot break: each retry waited at least its backoff.
    const gaps = times.slice(1).map((v, i) => v - times[i]!);
    gaps.forEach((gap, i) => {
      const least = BASE_DELAY_MS * 2 ** i * 0.9 - 10;
      assert.ok(gap >= least, `retry ${i + 1} came after ${gap} ms, before its ${least} ms backoff`);
    });
    assert.equal(condition(live, 'Reconciling'), undefined);
    assert.equal(live.status?.count, 4);
  });

  test('spec.retryInterval, when set, is the delay of every retry instead of the backoff', async (t) => {
    const ns = await testNamespace(t, 'retry-interval');
    const requests: QueueRequests = { delays: new Map(), retries: new Map() };
    await startToyController(t, ns, requests);
    await client.create(toy(ns, 'steady', { failTimes: 2, interval: '1h', retryInterval: '2s' }));
    await eventually('Ready after the failures', async () => {
      const obj = await getToy(ns, 'steady');
      return ready(obj)?.status === 'True' ? obj : undefined;
    });
    const key = `${ns}/steady`;
    assert.equal(requests.retries.get(key), undefined, 'no exponential backoff');
    const delays = requests.delays.get(key) ?? [];
    // Two retries at 2 s (±5% jitter), then the 1 h interval after the success.
    assert.equal(delays.length, 3, `delays asked for: ${delays.join(', ')}`);
    for (const ms of delays.slice(0, 2)) assert.ok(ms >= 1_900 && ms <= 2_100, `retry after ${ms} ms`);
    assert.ok(delays[2]! >= 3_420_000, `the interval after success: ${delays[2]} ms`);
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

  test("exports an object's suspend gauge, info, duration and last result, and removes them when it is deleted", async (t) => {
    const ns = await testNamespace(t, 'metrics');
    const metrics = new Metrics({ defaultMetrics: false });
    await startToyController(t, ns, undefined, metrics);
    const key = { apiVersion: 'test.mooring.dev/v1', kind: 'Toy', namespace: ns, name: 'watched' };
    const lines = async () =>
      (await metrics.render())
        .split('\n')
        .filter((l) => !l.startsWith('#') && l.includes(`namespace="${ns}"`));
    const has = (want: string) => async () => (await lines()).some((l) => l.startsWith(want));
    const object = `kind="Toy",name="watched",namespace="${ns}"`;
    await client.create(toy(ns, 'watched', { suspend: true }));
    await eventually('suspended in gotk_suspend_status', has(`gotk_suspend_status{${object}} 1`));
    await client.mergePatch(key, { spec: { suspend: false } });
    await eventually(
      'Ready in gotk_resource_info',
      has(`gotk_resource_info{${object},ready="True",suspended="false"`),
    );
    assert.ok(await has(`gotk_suspend_status{${object}} 0`)());
    assert.ok(await has(`gotk_reconcile_duration_seconds_count{${object}}`)());
    assert.ok(await has(`mooring_reconcile_last_result{${object},result="success"} 1`)());
    // One info series per object, however often it was reconciled.
    assert.equal((await lines()).filter((l) => l.startsWith('gotk_resource_info{')).length, 1);
    await client.delete(key);
    await eventually('every series of the deleted object gone', async () => (await lines()).length === 0);
  });

  test('kubectl wait --for=condition=Ready sees the Ready condition', async (t) => {
    const ns = await testNamespace(t, 'kubectl-wait');
    await startToyController(t, ns);
    await client.create(toy(ns, 'waited', { workMs: 500, message: 'all good' }));
    const stdout = await kubectl('-n', ns, 'wait', '--for=condition=Ready', 'toy/waited', '--timeout=20s');
    assert.match(stdout, /toy.test.mooring.dev\/waited condition met/);
  });

  test('a progress save on condition of no change writes while the object is unchanged, and refuses once someone else wrote', async (t) => {
    const ns = await testNamespace(t, 'if-unchanged');
    const answers = new Map<string, boolean[]>();
    const stored: string[] = [];
    const base = toyReconciler();
    const reconciler: typeof base = {
      ...base,
      async reconcile(obj, ctx) {
        const name = obj.metadata.name ?? '';
        ctx.status.note = 'intent';
        const first = await ctx.saveProgressIfUnchanged!('first');
        stored.push((await getToy(ns, name)).status?.note as string);
        if (name === 'moved')
          // Someone else writes between this reconcile's saves.
          await client.mergePatch(
            { apiVersion: obj.apiVersion, kind: 'Toy', namespace: ns, name },
            { metadata: { annotations: { touched: 'yes' } } },
          );
        ctx.status.note = 'second intent';
        const second = await ctx.saveProgressIfUnchanged!('second');
        answers.set(name, [first, second]);
        return { message: 'done' };
      },
    };
    await startWith(t, reconciler, ns);
    await client.create(toy(ns, 'still', { interval: '1h' }));
    await client.create(toy(ns, 'moved', { interval: '1h' }));
    await eventually('both reconciled', async () => answers.size === 2 || undefined);
    // Its own writes move the version too, and the controller follows them.
    assert.deepEqual(answers.get('still'), [true, true]);
    assert.deepEqual(answers.get('moved'), [true, false]);
    assert.deepEqual(
      stored,
      ['intent', 'intent'],
      'the first saves were written before the reconciles went on',
    );
  });

  test('a success the reconcile already announced (a NewArtifact) sends no Ready event; others do', async (t) => {
    const ns = await testNamespace(t, 'announced');
    const events: string[] = [];
    const base = toyReconciler();
    const reconciler: typeof base = {
      ...base,
      async reconcile(obj, ctx) {
        const told = obj.metadata.name === 'told';
        if (told) ctx.event('info', 'NewArtifact', 'stored artifact');
        return { message: 'done', revision: 'r1', announced: told };
      },
    };
    await startWith(t, reconciler, ns, {
      events: { record: (obj, e) => events.push(`${obj.metadata.name} ${e.reason}`) },
    });
    await client.create(toy(ns, 'told', { interval: '1h' }));
    await client.create(toy(ns, 'plain', { interval: '1h' }));
    await eventually('both Ready', async () =>
      ready(await getToy(ns, 'told'))?.status === 'True' &&
      ready(await getToy(ns, 'plain'))?.status === 'True'
        ? true
        : undefined,
    );
    assert.deepEqual(events.sort(), ['plain ReconciliationSucceeded', 'told NewArtifact']);
  });

  test("a reconcile's deadlines end with it: a finished reconcile's never fires, one it outlives aborts it", async (t) => {
    const ns = await testNamespace(t, 'deadline');
    const ended = new Map<string, AbortSignal>();
    const base = toyReconciler();
    const reconciler: typeof base = {
      ...base,
      async reconcile(obj, ctx) {
        const name = obj.metadata.name ?? '';
        const deadline = ctx.deadline(300);
        if (name === 'outlived') {
          await once(deadline, 'abort');
          throw deadline.reason;
        }
        if (!ended.has(name)) ended.set(name, deadline);
        if (name === 'failed') throw new Error('planned failure');
        return { message: 'done' };
      },
    };
    await startWith(t, reconciler, ns);
    for (const name of ['succeeded', 'failed', 'outlived'])
      await client.create(toy(ns, name, { interval: '1h' }));
    await eventually('succeeded Ready', async () => ready(await getToy(ns, 'succeeded'))?.status === 'True');
    await eventually('failed not Ready', async () => ready(await getToy(ns, 'failed'))?.status === 'False');
    const outlived = await eventually('outlived not Ready', async () => {
      const r = ready(await getToy(ns, 'outlived'));
      return r?.status === 'False' ? r : undefined;
    });
    assert.match(outlived.message, /aborted due to timeout/);
    // Node runs timers in the order they are due: when this one fires, so had theirs, were they left.
    await sleep(300);
    assert.deepEqual([...ended].map(([name, signal]) => [name, signal.aborted]).sort(), [
      ['failed', false],
      ['succeeded', false],
    ]);
  });

  test('a field set once survives later reconciles that start from a stale cached copy', async (t) => {
    const ns = await testNamespace(t, 'stale-cache');
    // The watch never delivers the controller's own status writes, the way a stalled watch or a
    // slow one under load leaves the informer behind: every reconcile reads a status-less copy.
    const lagging = new Proxy(client, {
      get(target, prop) {
        if (prop === 'watch') {
          return async function* (...args: Parameters<KubeClient['watch']>) {
            for await (const e of target.watch(...args))
              if (e.type !== 'MODIFIED' || !(e.object as Toy).status?.conditions) yield e;
          };
        }
        const value = Reflect.get(target, prop, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const base = toyReconciler();
    const seen = new Map<string, number>();
    const reconciler: typeof base = {
      ...base,
      async reconcile(obj, ctx) {
        const key = `${obj.metadata.namespace}/${obj.metadata.name}`;
        const n = (seen.get(key) ?? 0) + 1;
        seen.set(key, n);
        // Like lastPushCommit: written by the reconcile that did the work, not by the ones after.
        if (n === 1) ctx.status.note = 'set by the first reconcile';
        return { message: `reconcile ${n}` };
      },
    };
    const controller = await startWith(t, reconciler, ns, { client: lagging });
    await client.create(toy(ns, 'kept', { interval: '1s' }));
    const live = await eventually('three reconciles written', async () => {
      const obj = await getToy(ns, 'kept');
      return ready(obj)?.message === 'reconcile 3' ? obj : undefined;
    });
    assert.equal(live.status?.note, 'set by the first reconcile');
    // The write the watch never delivered is what the next reconcile builds on: it is kept.
    assert.equal(controller.unseenStatusWrites, 1);
  });

  test('forgets the statuses it wrote once the watch delivers them, so settled objects hold no copy', async (t) => {
    const ns = await testNamespace(t, 'written-seen');
    const controller = await startWith(t, toyReconciler(), ns);
    for (const name of ['one', 'two', 'three']) await client.create(toy(ns, name, { interval: '1h' }));
    for (const name of ['one', 'two', 'three'])
      await eventually(`${name} Ready`, async () => ready(await getToy(ns, name))?.status === 'True');
    await eventually('no status write left unseen', async () => controller.unseenStatusWrites === 0);
  });
});
