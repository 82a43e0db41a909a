import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import type { KubeClient, KubeObject } from '@mooring/runtime';
import { silentLogger } from '@mooring/runtime';
import { testCluster, testNamespace } from '@mooring/test/harness';
import { Dispatcher } from '../src/dispatcher.ts';
import type { InboundEvent } from '../src/event.ts';
import { startSink } from './http-sink.ts';

let client: KubeClient;
before(async () => {
  client = (await testCluster()).client;
});

const event = (namespace: string, i: number): InboundEvent => ({
  involvedObject: { kind: 'GitRepository', namespace, name: 'app' },
  severity: i % 2 ? 'error' : 'info',
  timestamp: '2026-01-01T00:00:00Z',
  message: `failure ${i}`,
  reason: 'GitOperationFailed',
  metadata: {},
  reportingController: 'mooring-source',
});

async function setup(namespace: string, address: string, alertSpec: Record<string, unknown> = {}) {
  const objects: KubeObject[] = [
    {
      apiVersion: 'notification.mooring.dev/v1',
      kind: 'Provider',
      metadata: { namespace, name: 'hook' },
      spec: { type: 'generic', address },
    },
    {
      apiVersion: 'notification.mooring.dev/v1',
      kind: 'Alert',
      metadata: { namespace, name: 'flood' },
      spec: {
        providerRef: { name: 'hook' },
        eventSources: [{ kind: 'GitRepository', name: '*' }],
        ...alertSpec,
      },
    },
  ];
  for (const o of objects) await client.create(o);
}

test('an outage flood is bounded per Alert: the burst goes out, then one summary of the rest', async (t) => {
  const ns = await testNamespace(t, 'flood');
  const sink = await startSink(t);
  await setup(ns, `${sink.url}/flood`);
  const d = new Dispatcher({
    client,
    log: silentLogger(),
    noCrossNamespaceRefs: false,
    // The summary window must outlast dispatching all 40 on a loaded machine, or it reports fewer.
    throttle: { burst: 3, perSecond: 0.001, summaryAfterMs: 5_000 },
  });
  t.after(() => d.close());
  const outcomes = (await Promise.all(Array.from({ length: 40 }, (_, i) => d.dispatch(event(ns, i))))).flat();
  assert.equal(outcomes.filter((o) => o.result === 'sent').length, 3);
  assert.equal(outcomes.filter((o) => o.result === 'throttled').length, 37);
  const got = await sink.received(4);
  const summary = JSON.parse(got[3]!.body);
  assert.equal(summary.reason, 'NotificationsSuppressed');
  assert.equal(summary.severity, 'error');
  assert.match(
    summary.message,
    new RegExp(`^37 notifications \\(\\d+ errors\\) of Alert ${ns}/flood were held back by its rate limit`),
  );
  await new Promise((r) => setTimeout(r, 400));
  assert.equal(sink.requests.length, 4, 'nothing else was sent');
});

test('a provider answering 500 is retried a bounded number of times, then recorded on the Provider', async (t) => {
  const ns = await testNamespace(t, 'retry');
  const sink = await startSink(t, () => 500);
  await setup(ns, `${sink.url}/down`);
  const recorded: { kind: string; message: string }[] = [];
  const d = new Dispatcher({
    client,
    log: silentLogger(),
    noCrossNamespaceRefs: false,
    send: { attempts: 3, baseDelayMs: 10, maxDelayMs: 20 },
    events: { record: (obj, e) => recorded.push({ kind: obj.kind, message: e.message }) },
  });
  t.after(() => d.close());
  const [outcome] = await d.dispatch(event(ns, 1));
  assert.equal(outcome?.result, 'failed');
  assert.equal(sink.requests.length, 3);
  assert.deepEqual(recorded, [
    {
      kind: 'Provider',
      message: `sending to Provider ${ns}/hook failed: the provider answered HTTP 500 (after 3 attempts)`,
    },
  ]);
});

test('an Alert with matchLabels only forwards events of labelled objects', async (t) => {
  const ns = await testNamespace(t, 'labels');
  const sink = await startSink(t);
  await setup(ns, `${sink.url}/l`, {
    eventSources: [{ kind: 'GitRepository', name: '*', matchLabels: { team: 'web' } }],
  });
  for (const [name, team] of [
    ['web-repo', 'web'],
    ['db-repo', 'db'],
  ]) {
    await client.create({
      apiVersion: 'source.mooring.dev/v1',
      kind: 'GitRepository',
      metadata: { namespace: ns, name, labels: { team: team! } },
      spec: { url: 'https://git.example/x.git', interval: '10m' },
    });
  }
  const d = new Dispatcher({ client, log: silentLogger(), noCrossNamespaceRefs: false });
  t.after(() => d.close());
  const on = (name: string): InboundEvent => ({
    ...event(ns, 0),
    involvedObject: { kind: 'GitRepository', namespace: ns, name },
  });
  assert.equal((await d.dispatch(on('web-repo')))[0]?.result, 'sent');
  assert.deepEqual(await d.dispatch(on('db-repo')), []);
  assert.equal(sink.requests.length, 1);
});
