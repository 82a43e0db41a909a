import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it, type TestContext } from 'node:test';
import { testCluster, testNamespace } from '@mooring/test/harness';
import { ApiError } from './api-error.ts';
import { type Clock, systemClock } from './clock.ts';
import { EventRecorder, type EventRecorderOptions, MAX_EVENT_MESSAGE } from './event-recorder.ts';
import { FakeClock } from './fake-clock.ts';
import type { KubeList, KubeObject } from './kube-object.ts';

const FIXED_TIME = Date.parse('2025-03-04T05:06:07.891Z');
/** Real timers, frozen `now`, so timestamps in assertions are exact. */
const frozenClock: Clock = { ...systemClock, now: () => FIXED_TIME };

const gitRepo: KubeObject = {
  apiVersion: 'source.mooring.dev/v1',
  kind: 'GitRepository',
  metadata: {
    namespace: 'apps',
    name: 'podinfo',
    uid: '7d1c8a52-0000-4000-8000-000000000001',
    resourceVersion: '42',
  },
};

/** A client that accepts every write and remembers it. */
function recordingClient() {
  const created: KubeObject[] = [];
  const client: EventRecorderOptions['client'] = {
    create: async <T extends KubeObject>(obj: T) => {
      created.push(obj);
      return obj;
    },
    mergePatch: async () => {
      throw new Error('unexpected patch');
    },
  };
  return { client, created };
}

interface Received {
  method: string | undefined;
  url: string | undefined;
  headers: IncomingHttpHeaders;
  body: unknown;
}

/** A notification receiver on loopback that records every request and answers `status`. */
async function sink(t: TestContext, status = 202) {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({
        method: req.method,
        url: req.url,
        headers: req.headers,
        body: JSON.parse(Buffer.concat(chunks).toString('utf8')),
      });
      res.writeHead(status).end();
    });
  });
  const port = await listen(server);
  t.after(() => close(server));
  return { url: `http://127.0.0.1:${port}/`, received };
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

function close(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

function debugLog() {
  const lines: { obj: Record<string, unknown>; msg: string }[] = [];
  return {
    logger: {
      debug: (obj: object, msg: string) => void lines.push({ obj: obj as Record<string, unknown>, msg }),
    },
    lines,
  };
}

describe('EventRecorder against the API server', () => {
  it('creates core/v1 Events with type, reason, source and count', async (t) => {
    const { client } = await testCluster();
    const namespace = await testNamespace(t, 'events');
    const cm = await client.create<KubeObject>({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'subject', namespace },
      data: { a: '1' },
    });
    const recorder = new EventRecorder({ client, component: 'source-operator', instance: 'source-0' });
    recorder.record(cm, {
      severity: 'info',
      reason: 'ArtifactStored',
      message: 'stored artifact for main@sha1:abc',
    });
    recorder.record(cm, { severity: 'error', reason: 'GitOperationFailed', message: 'clone failed' });
    assert.equal(await recorder.flush(10_000), true);

    const events = await client.list('v1', 'Event', {
      namespace,
      fieldSelector: `involvedObject.uid=${cm.metadata.uid}`,
    });
    const byReason = new Map(events.items.map((e) => [e.reason as string, e]));
    const normal = byReason.get('ArtifactStored');
    const warning = byReason.get('GitOperationFailed');
    assert.ok(normal && warning, JSON.stringify(events.items.map((e) => e.reason)));
    assert.equal(normal.type, 'Normal');
    assert.equal(warning.type, 'Warning');
    assert.equal(normal.message, 'stored artifact for main@sha1:abc');
    assert.equal(normal.count, 1);
    assert.deepEqual(normal.source, { component: 'source-operator', host: 'source-0' });
    assert.equal(normal.reportingComponent, 'source-operator');
    assert.equal(normal.reportingInstance, 'source-0');
    assert.match(normal.metadata.name!, /^subject\.[0-9a-f]+$/);
    assert.match(String(normal.firstTimestamp), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.deepEqual(
      {
        ...(normal.involvedObject as Record<string, unknown>),
      },
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        name: 'subject',
        namespace,
        uid: cm.metadata.uid,
        resourceVersion: cm.metadata.resourceVersion,
      },
    );
  });

  it('counts a repeated event on one Event instead of creating another', async (t) => {
    const { client } = await testCluster();
    const namespace = await testNamespace(t, 'events-repeat');
    const cm = await client.create<KubeObject>({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'again', namespace },
    });
    const recorder = new EventRecorder({ client, component: 'kustomize-operator' });
    for (let i = 0; i < 3; i++) {
      recorder.record(cm, {
        severity: 'error',
        reason: 'BuildFailed',
        message: 'kustomization.yaml not found',
      });
    }
    recorder.record(cm, { severity: 'error', reason: 'BuildFailed', message: 'another message' });
    assert.equal(await recorder.flush(10_000), true);
    const events: KubeList = await client.list('v1', 'Event', {
      namespace,
      fieldSelector: `involvedObject.uid=${cm.metadata.uid}`,
    });
    const counts = events.items.map((e) => [e.message, e.count]).sort();
    assert.deepEqual(counts, [
      ['another message', 1],
      ['kustomization.yaml not found', 3],
    ]);
  });

  it('truncates a long message to 1,024 characters', async (t) => {
    const { client } = await testCluster();
    const namespace = await testNamespace(t, 'events-long');
    const cm = await client.create<KubeObject>({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'long', namespace },
    });
    const recorder = new EventRecorder({ client, component: 'kustomize-operator' });
    recorder.record(cm, { severity: 'info', reason: 'Progressing', message: 'x'.repeat(5_000) });
    assert.equal(await recorder.flush(10_000), true);
    const events = await client.list('v1', 'Event', {
      namespace,
      fieldSelector: `involvedObject.uid=${cm.metadata.uid}`,
    });
    const message = String(events.items[0]?.message);
    assert.equal(message.length, MAX_EVENT_MESSAGE);
    assert.ok(message.endsWith('...'));
  });
});

describe('EventRecorder posting to the notification receiver', () => {
  it('posts the event contract JSON', async (t) => {
    const receiver = await sink(t);
    const { client, created } = recordingClient();
    const recorder = new EventRecorder({
      client,
      component: 'kustomize-operator',
      eventsAddr: receiver.url,
      clock: frozenClock,
    });
    recorder.record(gitRepo, {
      severity: 'info',
      reason: 'ReconciliationSucceeded',
      message: 'Applied revision: main@sha1:0123abc',
      metadata: { revision: 'main@sha1:0123abc', token: 'summary' },
    });
    recorder.record(gitRepo, { severity: 'error', reason: 'HealthCheckFailed', message: 'timeout' });
    assert.equal(await recorder.flush(5_000), true);

    assert.equal(created.length, 2);
    assert.equal(receiver.received.length, 2);
    const [first, second] = receiver.received;
    assert.equal(first!.method, 'POST');
    assert.equal(first!.url, '/');
    assert.equal(first!.headers['content-type'], 'application/json');
    assert.deepEqual(first!.body, {
      involvedObject: {
        kind: 'GitRepository',
        namespace: 'apps',
        name: 'podinfo',
        uid: '7d1c8a52-0000-4000-8000-000000000001',
        apiVersion: 'source.mooring.dev/v1',
      },
      severity: 'info',
      timestamp: '2025-03-04T05:06:07Z',
      message: 'Applied revision: main@sha1:0123abc',
      reason: 'ReconciliationSucceeded',
      metadata: { revision: 'main@sha1:0123abc', token: 'summary' },
      reportingController: 'kustomize-operator',
    });
    assert.deepEqual((second!.body as { severity: string; metadata: unknown }).severity, 'error');
    assert.deepEqual((second!.body as { metadata: unknown }).metadata, {});
  });

  it('truncates the posted message too', async (t) => {
    const receiver = await sink(t);
    const recorder = new EventRecorder({ ...recordingClient(), component: 'c', eventsAddr: receiver.url });
    recorder.record(gitRepo, { severity: 'info', reason: 'R', message: '€'.repeat(2_000) });
    await recorder.flush(5_000);
    const { message } = receiver.received[0]!.body as { message: string };
    assert.equal(Array.from(message).length, MAX_EVENT_MESSAGE);
  });

  it('sends credentials in the URL as basic auth', async (t) => {
    const receiver = await sink(t);
    const url = receiver.url.replace('http://', 'http://alert%40ops:p%3Ass@');
    const recorder = new EventRecorder({ ...recordingClient(), component: 'c', eventsAddr: `${url}hook` });
    recorder.record(gitRepo, { severity: 'info', reason: 'R', message: 'm' });
    assert.equal(await recorder.flush(5_000), true);
    const [got] = receiver.received;
    assert.equal(got!.url, '/hook');
    assert.equal(got!.headers.authorization, `Basic ${Buffer.from('alert@ops:p:ss').toString('base64')}`);
  });

  it('does not post when no address is configured', async () => {
    const { client, created } = recordingClient();
    const recorder = new EventRecorder({ client, component: 'c', eventsAddr: '' });
    recorder.record(gitRepo, { severity: 'info', reason: 'R', message: 'm' });
    assert.equal(await recorder.flush(5_000), true);
    assert.equal(created.length, 1);
  });

  it('retries a receiver that answers 503, and gives up on 400', async (t) => {
    const flaky = await sink(t, 503);
    const { logger, lines } = debugLog();
    const recorder = new EventRecorder({
      ...recordingClient(),
      component: 'c',
      eventsAddr: flaky.url,
      postRetries: 2,
      postRetryDelayMs: 10,
      logger,
    });
    recorder.record(gitRepo, { severity: 'info', reason: 'R', message: 'm' });
    assert.equal(await recorder.flush(5_000), true);
    assert.equal(flaky.received.length, 3);
    assert.equal(lines.length, 1);
    assert.equal(lines[0]!.msg, 'post event failed');
    assert.match(String(lines[0]!.obj.err), /HTTP 503/);

    const refusing = await sink(t, 400);
    const r2 = new EventRecorder({
      ...recordingClient(),
      component: 'c',
      eventsAddr: refusing.url,
      postRetryDelayMs: 10,
    });
    r2.record(gitRepo, { severity: 'info', reason: 'R', message: 'm' });
    await r2.flush(5_000);
    assert.equal(refusing.received.length, 1);
  });

  it('never blocks or throws with a dead receiver', async () => {
    const server = createServer();
    const port = await listen(server);
    await close(server);
    const { logger, lines } = debugLog();
    const { client, created } = recordingClient();
    const recorder = new EventRecorder({
      client,
      component: 'c',
      eventsAddr: `http://user:secret@127.0.0.1:${port}/hook/token123`,
      postRetries: 0,
      logger,
    });
    for (let i = 0; i < 200; i++)
      recorder.record(gitRepo, { severity: 'error', reason: 'R', message: `m${i}` });
    // `record` returns before any delivery starts: none has run within the caller's synchronous code.
    assert.equal(created.length, 0, 'record wrote an Event before returning');
    assert.equal(lines.length, 0, 'record tried the receiver before returning');
    assert.equal(await recorder.flush(10_000), true);
    assert.equal(created.length, 200);
    assert.equal(lines.length, 200);
    assert.match(String(lines[0]!.obj.err), /ECONNREFUSED/);
    // The log names the receiver by origin only: no credentials or path.
    assert.equal(lines[0]!.obj.eventsAddr, `http://127.0.0.1:${port}`);
    assert.doesNotMatch(JSON.stringify(lines), /secret|token123/);
  });

  it('drops the oldest events when a hanging receiver fills the buffer, and flush gives up at its deadline', async (t) => {
    const hung: Server = createServer(() => {});
    const port = await listen(hung);
    t.after(() => close(hung));
    // Virtual time: flush's deadline is checked by moving the clock, not by measuring a wait.
    const clock = new FakeClock(FIXED_TIME);
    const { client, created } = recordingClient();
    const recorder = new EventRecorder({
      client,
      component: 'c',
      eventsAddr: `http://127.0.0.1:${port}/`,
      bufferSize: 5,
      postRetries: 0,
      postTimeoutMs: 60_000,
      clock,
    });
    for (let i = 0; i < 20; i++)
      recorder.record(gitRepo, { severity: 'info', reason: 'R', message: `m${i}` });
    assert.equal(created.length, 0, 'record wrote an Event before returning');
    // 20 events into a buffer of 5 per destination: the Event writer has not started yet, so both drop 15.
    assert.equal(recorder.dropped, 30);
    let flushed: boolean | undefined;
    const flush = recorder.flush(300).then((drained) => (flushed = drained));
    await clock.advanceAsync(299);
    assert.equal(flushed, undefined, 'flush returned before its 300 ms deadline');
    await clock.advanceAsync(1);
    assert.equal(await flush, false);
    assert.ok(recorder.pending > 0);
    // The Event writer drained its five; the post of the first one still hangs.
    assert.deepEqual(
      created.map((e) => (e as KubeObject & { message?: string }).message),
      ['m15', 'm16', 'm17', 'm18', 'm19'],
    );
  });

  it('swallows API errors and logs them at debug', async () => {
    const { logger, lines } = debugLog();
    const client: EventRecorderOptions['client'] = {
      create: async () => {
        throw new ApiError('POST', '/api/v1/namespaces/apps/events', 403, { message: 'forbidden' }, '');
      },
      mergePatch: async () => {
        throw new Error('unexpected');
      },
    };
    const recorder = new EventRecorder({ client, component: 'c', logger });
    recorder.record(gitRepo, { severity: 'info', reason: 'R', message: 'm' });
    recorder.record({ apiVersion: 'v1', kind: 'Broken' } as unknown as KubeObject, {
      severity: 'info',
      reason: 'R',
      message: 'm',
    });
    assert.equal(await recorder.flush(5_000), true);
    assert.equal(lines[0]!.msg, 'create Event failed');
    assert.match(String(lines[0]!.obj.err), /forbidden/);
    assert.equal(lines.length, 2);
  });
});
