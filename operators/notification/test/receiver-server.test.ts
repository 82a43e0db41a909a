import assert from 'node:assert/strict';
import { createHmac, randomUUID } from 'node:crypto';
import { Agent, request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { before, type TestContext, test } from 'node:test';
import { NOTIFICATION_API_VERSION, RECONCILE_REQUESTED_AT_ANNOTATION, type Receiver } from '@mooring/api';
import { type KubeClient, silentLogger } from '@mooring/runtime';
import { eventually, testCluster, testNamespace } from '@mooring/test/harness';
import { type CachedReceiver, ReceiverCache, type ReceiverLookup } from '../src/receiver-cache.ts';
import { ReceiverServer, type ReceiverServerOptions } from '../src/receiver-server.ts';
import { webhookPath } from '../src/webhook-path.ts';

const TOKEN = 'rs-SECRET-33aa01';

let client: KubeClient;
before(async () => {
  client = (await testCluster()).client;
});

interface Answer {
  status: number;
  text: string;
}

interface SendOptions {
  method?: string;
  body?: string;
  headers?: Record<string, string>;
  /** Local address on loopback (127.0.0.0/8 is all loopback on Linux): a different source. */
  from?: string;
  agent?: Agent;
}

function send(port: number, path: string, o: SendOptions = {}): Promise<Answer> {
  const method = o.method ?? 'POST';
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method,
        headers: { 'content-type': 'application/json', ...o.headers },
        ...(o.agent ? { agent: o.agent } : { agent: false, localAddress: o.from }),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
      },
    );
    req.on('error', reject);
    req.end(method === 'GET' ? undefined : (o.body ?? '{}'));
  });
}

const sig256 = (key: string, body: string) =>
  `sha256=${createHmac('sha256', key).update(body).digest('hex')}`;

/** A client whose every call is counted: what the webhook server asks the API server. */
function counting(c: KubeClient): { client: KubeClient; calls: Map<string, number> } {
  const calls = new Map<string, number>();
  const proxy = new Proxy(c, {
    get(target, prop) {
      const v = Reflect.get(target, prop, target) as unknown;
      if (typeof v !== 'function') return v;
      return (...args: unknown[]) => {
        calls.set(String(prop), (calls.get(String(prop)) ?? 0) + 1);
        return (v as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { client: proxy, calls };
}
const total = (calls: Map<string, number>) => [...calls.values()].reduce((a, b) => a + b, 0);

/** A token Secret, a GitRepository per Receiver and the Receivers, straight from the API (no reconciler). */
async function receivers(ns: string, specs: Record<string, Partial<Receiver['spec']>>) {
  await client.create({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { namespace: ns, name: 'tok' },
    stringData: { token: TOKEN },
  });
  for (const [name, spec] of Object.entries(specs)) {
    await client.create({
      apiVersion: 'source.mooring.dev/v1',
      kind: 'GitRepository',
      metadata: { namespace: ns, name: `repo-${name}` },
      spec: { url: 'https://g/x.git', interval: '1h' },
    });
    await client.create({
      apiVersion: NOTIFICATION_API_VERSION,
      kind: 'Receiver',
      metadata: { namespace: ns, name },
      spec: {
        type: 'generic',
        secretRef: { name: 'tok' },
        resources: [{ kind: 'GitRepository', name: `repo-${name}` }],
        ...spec,
      },
    });
  }
  return Object.fromEntries(Object.keys(specs).map((name) => [name, webhookPath(TOKEN, name, ns)]));
}

const requestedAt = async (ns: string, repo: string) =>
  (
    await client.get({
      apiVersion: 'source.mooring.dev/v1',
      kind: 'GitRepository',
      namespace: ns,
      name: repo,
    })
  ).metadata.annotations?.[RECONCILE_REQUESTED_AT_ANNOTATION];

/** The cache of the namespace's Receivers and Secrets, listed before it resolves. */
async function cacheOf(t: TestContext, ns: string): Promise<ReceiverCache> {
  const cache = new ReceiverCache(client, { namespace: ns });
  await cache.start();
  t.after(() => cache.stop());
  return cache;
}

async function server(
  t: TestContext,
  options: Partial<ReceiverServerOptions> & { receivers: ReceiverLookup },
) {
  const s = new ReceiverServer({ client, log: silentLogger(), noCrossNamespaceRefs: false, ...options });
  const port = await s.listen(0, '127.0.0.1');
  t.after(() => s.close());
  return port;
}

/** Runs `tasks` with at most `concurrency` in flight; `progress` counts the finished ones. */
async function pool(tasks: (() => Promise<void>)[], concurrency: number, progress: { done: number }) {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < tasks.length) {
        const task = tasks[next++]!;
        await task();
        progress.done++;
      }
    }),
  );
}

const tally = (xs: (number | string)[]) => {
  const m: Record<string, number> = {};
  for (const x of xs) m[x] = (m[x] ?? 0) + 1;
  return m;
};

test('webhook DoS: a flood of unsigned requests does not starve signed webhooks', async (t) => {
  const ns = await testNamespace(t, 'rs-flood');
  const { gh } = await receivers(ns, { gh: { type: 'github', events: ['push'] } });
  const port = await server(t, { receivers: await cacheOf(t, ns) }); // production limits
  const FLOOD = 2_000;
  const SIGNED = 20;
  // Eleven sources, one of them the address the signed webhooks come from (behind an ingress
  // every request has the same source address).
  const sources = ['127.0.0.1', ...Array.from({ length: 10 }, (_, i) => `127.0.0.${i + 2}`)];
  const agents = sources.map((from) => new Agent({ keepAlive: true, maxSockets: 8, localAddress: from }));
  t.after(() => {
    for (const a of agents) a.destroy();
  });
  const flood: (number | string)[] = [];
  const progress = { done: 0 };
  const tasks = Array.from({ length: FLOOD }, (_, i) => async () => {
    const body = JSON.stringify({ ref: 'refs/heads/main', n: i });
    // Half carry no signature at all, half one made with a guessed key.
    const headers: Record<string, string> = { 'x-github-event': 'push' };
    if (i % 2) headers['x-hub-signature-256'] = sig256('guess', body);
    try {
      flood.push((await send(port, gh!, { body, headers, agent: agents[i % agents.length] })).status);
    } catch (err) {
      flood.push((err as NodeJS.ErrnoException).code ?? 'error');
    }
  });
  const flooding = pool(tasks, 40, progress);
  const signed: number[] = [];
  for (let i = 0; i < SIGNED; i++) {
    // Spread through the flood: each one waits until another twentieth of it has been answered.
    await eventually(
      'flood progress',
      async () => progress.done >= (i * FLOOD) / SIGNED || progress.done === FLOOD,
      600_000,
    );
    const body = JSON.stringify({ ref: 'refs/heads/main', after: `commit-${i}` });
    const answer = await send(port, gh!, {
      body,
      from: '127.0.0.1',
      headers: {
        'x-github-event': 'push',
        'x-github-delivery': randomUUID(),
        'x-hub-signature-256': sig256(TOKEN, body),
      },
    });
    signed.push(answer.status);
  }
  await flooding;
  t.diagnostic(
    `signed: ${JSON.stringify(tally(signed))}; flood of ${FLOOD}: ${JSON.stringify(tally(flood))}`,
  );
  assert.deepEqual(tally(signed), { 200: SIGNED }, 'every signed webhook was accepted');
  assert.equal(flood.length, FLOOD);
  assert.ok(
    flood.every((s) => s === 401 || s === 429),
    `unsigned requests are refused: ${JSON.stringify(tally(flood))}`,
  );
  assert.ok(await requestedAt(ns, 'repo-gh'), 'the signed webhooks asked the GitRepository to reconcile');
});

test('webhook DoS: unverified requests are limited per source address and globally, a signed one never', async (t) => {
  const ns = await testNamespace(t, 'rs-sources');
  const { gh } = await receivers(ns, { gh: { type: 'github' } });
  const port = await server(t, {
    receivers: await cacheOf(t, ns),
    perSource: { perSecond: 0.001, burst: 3 },
    unverified: { perSecond: 0.001, burst: 8 },
  });
  const unknown = (from: string) => send(port, `/hook/${'0'.repeat(64)}`, { from }).then((a) => a.status);
  const signed = async (from: string) => {
    const body = JSON.stringify({ from });
    const headers = { 'x-github-event': 'push', 'x-hub-signature-256': sig256(TOKEN, body) };
    return (await send(port, gh!, { from, body, headers })).status;
  };
  const a = [];
  for (let i = 0; i < 5; i++) a.push(await unknown('127.0.0.2'));
  assert.deepEqual(a, [404, 404, 404, 429, 429], 'one address past its burst gets 429');
  assert.equal(await unknown('127.0.0.3'), 404, 'another address is not limited by it');
  assert.equal(await signed('127.0.0.2'), 200, 'a signed webhook from the limited address is accepted');
  // 3 + 1 of the global 8 are spent; three more addresses spend the rest.
  for (const from of ['127.0.0.4', '127.0.0.4', '127.0.0.4', '127.0.0.5'])
    assert.equal(await unknown(from), 404);
  assert.equal(await unknown('127.0.0.6'), 429, 'past the global limit a fresh address gets 429 too');
  assert.equal(
    (await send(port, gh!, { from: '127.0.0.6', headers: { 'x-github-event': 'push' } })).status,
    429,
    'so does an unsigned request on a real path',
  );
  assert.equal(await signed('127.0.0.6'), 200, 'and a signed webhook is still accepted');
});

test('webhook DoS: unsigned, forged and unknown-path requests cost no API request', async (t) => {
  const ns = await testNamespace(t, 'rs-noapi');
  const { gh, gl } = await receivers(ns, { gh: { type: 'github' }, gl: { type: 'gitlab' } });
  const counted = counting(client);
  const cache = await cacheOf(t, ns);
  const port = await server(t, {
    client: counted.client,
    receivers: cache,
    perSource: { perSecond: 1000, burst: 1000 },
    unverified: { perSecond: 1000, burst: 1000 },
  });
  const answers: number[] = [];
  for (let i = 0; i < 100; i++) {
    const body = JSON.stringify({ n: i });
    answers.push((await send(port, gh!, { body })).status);
    answers.push(
      (await send(port, gh!, { body, headers: { 'x-hub-signature-256': sig256('x', body) } })).status,
    );
    answers.push((await send(port, gl!, { body, headers: { 'x-gitlab-token': 'guess' } })).status);
    answers.push((await send(port, `/hook/${i}`, { body })).status);
  }
  assert.deepEqual(tally(answers), { 401: 300, 404: 100 });
  assert.equal(
    total(counted.calls),
    0,
    `400 refused requests made no API call: ${JSON.stringify([...counted.calls])}`,
  );
  const body = '{"ref":"refs/heads/main"}';
  const ok = await send(port, gh!, { body, headers: { 'x-hub-signature-256': sig256(TOKEN, body) } });
  assert.equal(ok.status, 200);
  assert.deepEqual(
    [...counted.calls],
    [['mergePatch', 1]],
    'an accepted one makes only the annotation patch',
  );
});

/** A lookup that always finds one generic Receiver selecting nothing: a server with no API behind it. */
function oneGenericReceiver(path: string): ReceiverLookup {
  const receiver = {
    apiVersion: NOTIFICATION_API_VERSION,
    kind: 'Receiver',
    metadata: { namespace: 'ns', name: 'r' },
    spec: { type: 'generic', secretRef: { name: 'tok' }, resources: [] },
  } as unknown as Receiver;
  const entry: CachedReceiver = { namespace: 'ns', name: 'r', receiver, token: TOKEN };
  return { synced: () => true, lookup: (p) => (p === path ? entry : undefined) };
}

/** Resolves when the server closes `socket`, with what it sent before; rejects after `boundMs`. */
function closedByServer(socket: Socket, boundMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let got = '';
    socket.on('data', (d: Buffer) => {
      got += d.toString();
    });
    socket.on('error', () => {});
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`still open after ${boundMs} ms`));
    }, boundMs);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(got);
    });
  });
}

test('webhook Slowloris: connections that never finish their headers are closed by the server', async (t) => {
  const headersTimeoutMs = 400;
  const port = await server(t, { receivers: oneGenericReceiver('/hook/ok'), headersTimeoutMs });
  // Generous: twenty times the timeout. Node's default check interval (30 s) would miss it.
  const bound = 20 * headersTimeoutMs;
  const SLOW = 90;
  const timers: NodeJS.Timeout[] = [];
  t.after(() => {
    for (const x of timers) clearInterval(x);
  });
  const closes: Promise<string>[] = [];
  for (let i = 0; i < SLOW; i++) {
    const socket = connect(port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    closes.push(closedByServer(socket, bound));
    if (i % 3 === 1) socket.write('POST /hook/ok HTTP/1.1\r\nHost: x\r\n');
    if (i % 3 === 2) {
      // A header line now and then, never the blank line that ends them.
      socket.write('POST /hook/ok HTTP/1.1\r\n');
      const timer = setInterval(() => socket.writable && socket.write(`X-${i}: y\r\n`), headersTimeoutMs / 8);
      timers.push(timer);
      socket.on('close', () => clearInterval(timer));
    }
  }
  assert.equal((await send(port, '/hook/ok')).status, 200, 'the server answers while they hang');
  const answers = await Promise.allSettled(closes);
  const closed = answers.filter((a) => a.status === 'fulfilled').length;
  assert.equal(closed, SLOW, `the server closed ${closed} of ${SLOW} slow connections within ${bound} ms`);
  const timedOut = answers.filter(
    (a) => a.status === 'fulfilled' && a.value.startsWith('HTTP/1.1 408'),
  ).length;
  assert.equal(timedOut, SLOW, 'each was told 408 Request Timeout');
});

test('webhook Slowloris: a body that arrives too slowly is answered 408 and its connection closed', async (t) => {
  const bodyTimeoutMs = 300;
  const port = await server(t, { receivers: oneGenericReceiver('/hook/ok'), bodyTimeoutMs });
  const bound = 20 * bodyTimeoutMs;
  const SLOW = 20;
  const timers: NodeJS.Timeout[] = [];
  t.after(() => {
    for (const x of timers) clearInterval(x);
  });
  const closes: Promise<string>[] = [];
  for (let i = 0; i < SLOW; i++) {
    const socket = connect(port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    closes.push(closedByServer(socket, bound));
    socket.write('POST /hook/ok HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n{');
    // One byte now and then, for ever: the body never completes.
    const timer = setInterval(() => socket.writable && socket.write(' '), bodyTimeoutMs / 6);
    timers.push(timer);
    socket.on('close', () => clearInterval(timer));
  }
  const answers = await Promise.allSettled(closes);
  const by408 = answers.filter((a) => a.status === 'fulfilled' && a.value.startsWith('HTTP/1.1 408')).length;
  assert.equal(
    by408,
    SLOW,
    `${by408} of ${SLOW} slow bodies were answered 408 and closed within ${bound} ms`,
  );
  assert.equal((await send(port, '/hook/ok')).status, 200, 'a prompt request still works');
});

test('webhook replay: a delivery already accepted is answered 200 and triggers no second reconcile', async (t) => {
  const ns = await testNamespace(t, 'rs-replay');
  const paths = await receivers(ns, {
    gh: { type: 'github' },
    gitea: { type: 'github' },
    gl: { type: 'gitlab' },
    bb: { type: 'bitbucket' },
  });
  const counted = counting(client);
  const port = await server(t, {
    client: counted.client,
    receivers: await cacheOf(t, ns),
    // Three accepted deliveries per Receiver at most: replays must not spend them.
    perReceiver: { perSecond: 0.001, burst: 3 },
    perSource: { perSecond: 1000, burst: 1000 },
  });
  const triggers = () => counted.calls.get('mergePatch') ?? 0;
  // How each sender signs a body and names a delivery.
  const senders: Record<string, (body: string, id: string) => Record<string, string>> = {
    gh: (b, id) => ({ 'x-hub-signature-256': sig256(TOKEN, b), 'x-github-delivery': id }),
    gitea: (b, id) => ({ 'x-hub-signature-256': sig256(TOKEN, b), 'x-gitea-delivery': id }),
    gl: (_b, id) => ({ 'x-gitlab-token': TOKEN, 'x-gitlab-event-uuid': id }),
    bb: (b, id) => ({ 'x-hub-signature': sig256(TOKEN, b), 'x-request-uuid': id }),
  };
  for (const [name, sign] of Object.entries(senders)) {
    const post = (body: string, id: string) => send(port, paths[name]!, { body, headers: sign(body, id) });
    const before = triggers();
    const first = await post('{"after":"c1"}', 'd1');
    assert.equal(first.status, 200, `${name}: first delivery`);
    assert.equal(triggers(), before + 1);
    const replays = [];
    for (let i = 0; i < 10; i++) replays.push(await post('{"after":"c1"}', 'd1'));
    assert.deepEqual(tally(replays.map((r) => r.status)), { 200: 10 }, `${name}: replays answered 200`);
    assert.match(replays[0]!.text, /already accepted/);
    assert.equal(triggers(), before + 1, `${name}: replays triggered nothing`);
    const sameBodyNewId = await post('{"after":"c1"}', 'd1-forged');
    if (name === 'gl') {
      // GitLab's token is not a signature of the body: a new event UUID is a new event.
      assert.equal(sameBodyNewId.status, 200);
      assert.equal(triggers(), before + 2);
    } else {
      // The delivery header is not signed, the body is: a replay under a new ID is still one.
      assert.match(sameBodyNewId.text, /already accepted/, `${name}: same signed body, new delivery ID`);
      assert.equal(triggers(), before + 1);
    }
    const fresh = await post('{"after":"c2"}', 'd2');
    assert.equal(fresh.status, 200, `${name}: a new delivery after ten replays (${fresh.text.trim()})`);
    assert.match(fresh.text, /1 resource asked to reconcile/);
  }

  // A delivery whose trigger failed is not remembered: the sender's redelivery goes through.
  await client.create({
    apiVersion: NOTIFICATION_API_VERSION,
    kind: 'Receiver',
    metadata: { namespace: ns, name: 'later' },
    spec: {
      type: 'github',
      secretRef: { name: 'tok' },
      resources: [{ kind: 'GitRepository', name: 'later' }],
    },
  });
  const later = webhookPath(TOKEN, 'later', ns);
  const body = '{"after":"c9"}';
  const headers = senders.gh!(body, 'd9');
  assert.equal(
    (
      await eventually('the new Receiver in the cache', async () => {
        const a = await send(port, later, { body, headers });
        return a.status === 404 ? undefined : a;
      })
    ).status,
    500,
    'the GitRepository does not exist yet',
  );
  await client.create({
    apiVersion: 'source.mooring.dev/v1',
    kind: 'GitRepository',
    metadata: { namespace: ns, name: 'later' },
    spec: { url: 'https://g/x.git', interval: '1h' },
  });
  const redelivered = await send(port, later, { body, headers });
  assert.equal(redelivered.status, 200, redelivered.text);
  assert.ok(await requestedAt(ns, 'later'));
});

test('per-Receiver token bucket answers 429 past its burst for verified requests, other paths unaffected', async (t) => {
  const ns = await testNamespace(t, 'rs-limit');
  const { r } = await receivers(ns, { r: {} });
  const port = await server(t, {
    receivers: await cacheOf(t, ns),
    perReceiver: { perSecond: 0.01, burst: 2 },
  });
  const codes = [];
  for (let i = 0; i < 4; i++) codes.push((await send(port, r!)).status);
  assert.deepEqual(codes, [200, 200, 429, 429]);
  assert.equal((await send(port, '/hook/unknown')).status, 404);
});

test('unverified requests from one address past its burst get 429 even for unknown paths', async (t) => {
  const port = await server(t, {
    receivers: oneGenericReceiver('/hook/ok'),
    perSource: { perSecond: 0.01, burst: 3 },
  });
  const codes = [];
  for (let i = 0; i < 5; i++) codes.push((await send(port, `/hook/${i}`)).status);
  assert.deepEqual(codes, [404, 404, 404, 429, 429]);
  assert.equal((await send(port, '/hook/ok')).status, 200, 'a verified request from the same address is not');
});

test('the cache follows watches: suspend, a rotated token and a deleted Receiver take effect without an API read', async (t) => {
  const ns = await testNamespace(t, 'rs-states');
  const { r } = await receivers(ns, { r: {} });
  const port = await server(t, {
    receivers: await cacheOf(t, ns),
    perSource: { perSecond: 1000, burst: 1000 },
  });
  const status = (path: string, method = 'POST') => send(port, path, { method }).then((a) => a.status);
  assert.equal(await status(r!), 200);
  assert.equal(await status(r!, 'GET'), 405);
  const key = { apiVersion: NOTIFICATION_API_VERSION, kind: 'Receiver', namespace: ns, name: 'r' };
  await client.mergePatch(key, { spec: { suspend: true } });
  await eventually('suspended: 503', async () => (await status(r!)) === 503);
  await client.mergePatch(key, { spec: { suspend: false } });
  await eventually('resumed: 200', async () => (await status(r!)) === 200);
  await client.mergePatch(
    { apiVersion: 'v1', kind: 'Secret', namespace: ns, name: 'tok' },
    { stringData: { token: 'rotated-SECRET' } },
  );
  const rotated = webhookPath('rotated-SECRET', 'r', ns);
  await eventually('the new path works', async () => (await status(rotated)) === 200);
  assert.equal(await status(r!), 404, 'a path from the old token is unknown');
  await client.mergePatch(key, { spec: { resourceFilter: 'true' } });
  await eventually('an unsupported spec: 503', async () => (await status(rotated)) === 503);
  await client.delete(key);
  await eventually('deleted: 404', async () => (await status(rotated)) === 404);
});
