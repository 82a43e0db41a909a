import assert from 'node:assert/strict';
import { request } from 'node:http';
import { before, type TestContext, test } from 'node:test';
import { type KubeClient, silentLogger } from '@mooring/runtime';
import { testCluster, testNamespace } from '../../../test/harness/index.ts';
import { ReceiverIndex } from '../src/receiver-index.ts';
import { ReceiverServer, type ReceiverServerOptions } from '../src/receiver-server.ts';
import { webhookPath } from '../src/webhook-path.ts';

const TOKEN = 'rs-SECRET-33aa01';
let client: KubeClient;
before(async () => {
  client = (await testCluster()).client;
});

function send(port: number, path: string, method = 'POST') {
  return new Promise<number>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(method === 'GET' ? undefined : '{}');
  });
}

/** A generic Receiver marked Ready by hand, so the server can be tested without its reconciler. */
async function readyReceiver(ns: string, name: string, suspend = false) {
  await client.create({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { namespace: ns, name: 'tok' },
    stringData: { token: TOKEN },
  });
  await client.create({
    apiVersion: 'source.mooring.dev/v1',
    kind: 'GitRepository',
    metadata: { namespace: ns, name: 'app' },
    spec: { url: 'https://g/x.git', interval: '1h' },
  });
  await client.create({
    apiVersion: 'notification.mooring.dev/v1',
    kind: 'Receiver',
    metadata: { namespace: ns, name },
    spec: {
      type: 'generic',
      suspend,
      secretRef: { name: 'tok' },
      resources: [{ kind: 'GitRepository', name: 'app' }],
    },
  });
  const path = webhookPath(TOKEN, name, ns);
  await client.applyStatus(
    {
      apiVersion: 'notification.mooring.dev/v1',
      kind: 'Receiver',
      metadata: { namespace: ns, name },
      status: {
        webhookPath: path,
        conditions: [
          {
            type: 'Ready',
            status: 'True',
            reason: 'Succeeded',
            message: 'ok',
            lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
          },
        ],
      },
    },
    { fieldManager: 'test', force: true },
  );
  return path;
}

async function server(t: TestContext, index: ReceiverIndex, extra: Partial<ReceiverServerOptions> = {}) {
  const s = new ReceiverServer({ client, index, log: silentLogger(), noCrossNamespaceRefs: false, ...extra });
  const port = await s.listen(0, '127.0.0.1');
  t.after(() => s.close());
  return port;
}

test('per-Receiver token bucket answers 429 past its burst, other paths unaffected', async (t) => {
  const ns = await testNamespace(t, 'rs-limit');
  const path = await readyReceiver(ns, 'r');
  const index = new ReceiverIndex();
  index.set({ namespace: ns, name: 'r' }, path);
  const port = await server(t, index, { perReceiver: { perSecond: 0.01, burst: 2 } });
  const codes = [];
  for (let i = 0; i < 4; i++) codes.push(await send(port, path));
  assert.deepEqual(codes, [200, 200, 429, 429]);
  assert.equal(await send(port, '/hook/unknown'), 404);
});

test('per-client token bucket answers 429 even for unknown paths, so path guessing is slowed', async (t) => {
  const port = await server(t, new ReceiverIndex(), { perClient: { perSecond: 0.01, burst: 3 } });
  const codes = [];
  for (let i = 0; i < 5; i++) codes.push(await send(port, `/hook/${i}`));
  assert.deepEqual(codes, [404, 404, 404, 429, 429]);
});

test('suspended Receiver answers 503; wrong method 405; a path from an old token 404', async (t) => {
  const ns = await testNamespace(t, 'rs-states');
  const path = await readyReceiver(ns, 'sleepy', true);
  const index = new ReceiverIndex();
  index.set({ namespace: ns, name: 'sleepy' }, path);
  index.set({ namespace: ns, name: 'gone' }, '/hook/stale');
  const port = await server(t, index);
  assert.equal(await send(port, path), 503);
  assert.equal(await send(port, path, 'GET'), 405);
  assert.equal(await send(port, '/hook/stale'), 404, 'the Receiver does not exist');
  assert.equal(index.lookup('/hook/stale'), undefined, 'and its stale path is forgotten');
});
