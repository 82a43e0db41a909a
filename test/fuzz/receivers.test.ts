// Fuzzes the Receiver webhook server through the whole notification operator against the test
// control plane: one Receiver of every type the API knows (and a suspended one), then random raw
// HTTP requests — methods, paths, headers (right and wrong signatures, lying lengths, chunked
// bodies), bodies of every size — over plain TCP. No answer may be a 500 (or any 5xx but 503),
// every connection must be answered or closed within the server's configured timeouts, and the
// server must still accept a signed webhook afterwards.
import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { RECEIVER_TYPES } from '@mooring/api';
import { notificationOperator, webhookPath } from '@mooring/notification-operator';
import { VERIFIERS } from '@mooring/notification-operator/receivers';
import type { KubeClient, KubeObject } from '@mooring/runtime';
import { eventually } from '../harness/eventually.ts';
import {
  type InProcessOperators,
  startInProcessOperators,
  testCluster,
  uniqueName,
} from '../harness/index.ts';
import { check, corpusFiles, fc, knownBugs } from './fuzz.ts';

const TOKEN = 'fuzz-hook-SECRET-7c1e';
const MAX_BODY = 64 * 1024;
/** The server's own deadlines, short so slow and incomplete requests end soon. */
const TIMEOUTS = { headersTimeoutMs: 500, requestTimeoutMs: 1_000, bodyTimeoutMs: 500 };
/**
 * Not a speed requirement: a connection still open this long after the request was sent has
 * outlived every timeout the server was given many times over, so it is reported as a hang.
 */
const HANG_MS = 60_000;

let client: KubeClient;
let namespace: string;
let operators: InProcessOperators | undefined;
let port: number;

/** The Receivers made for the run: name → type (the supported ones Ready, the others not). */
const receivers = new Map<string, string>();
const supported = (type: string) => VERIFIERS[type] !== undefined;

before(async () => {
  client = (await testCluster()).client;
  namespace = uniqueName('fuzz-receivers');
  await client.create({
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: namespace, labels: { 'test.mooring.dev/run': 'true' } },
  });
  const create = (o: KubeObject) => client.create({ ...o, metadata: { ...o.metadata, namespace } });
  await create({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'tok' }, stringData: { token: TOKEN } });
  await create({
    apiVersion: 'source.mooring.dev/v1',
    kind: 'GitRepository',
    metadata: { name: 'app' },
    spec: { url: 'https://git.example/app.git', interval: '1h' },
  });
  const receiver = (name: string, spec: Record<string, unknown>) =>
    create({
      apiVersion: 'notification.mooring.dev/v1',
      kind: 'Receiver',
      metadata: { name },
      spec: { resources: [{ kind: 'GitRepository', name: 'app' }], secretRef: { name: 'tok' }, ...spec },
    });
  for (const type of RECEIVER_TYPES) {
    const name = `r-${type}`;
    receivers.set(name, type);
    await receiver(name, {
      type,
      ...(type === 'github' || type === 'gitlab' ? { events: ['push', 'Push Hook'] } : {}),
      ...(type === 'generic-oidc'
        ? { oidcProviders: [{ issuerURL: 'https://issuer.example', validations: [] }] }
        : {}),
    });
  }
  receivers.set('r-suspended', 'generic');
  await receiver('r-suspended', { type: 'generic', suspend: true });

  const listening = new Promise<number>((resolve) => {
    // Limits high enough that the fuzz reaches verification instead of the token buckets; the
    // unknown keys are for servers before and after the rate-limit rework.
    const receiverLimits = {
      maxBodyBytes: MAX_BODY,
      perReceiver: { perSecond: 1e6, burst: 1e6 },
      perSource: { perSecond: 1e6, burst: 1e6 },
      perClient: { perSecond: 1e6, burst: 1e6 },
      unverified: { perSecond: 1e6, burst: 1e6 },
      ...TIMEOUTS,
    };
    startInProcessOperators(
      [notificationOperator({ onListening: (ports) => resolve(ports.receiver), receiverLimits })],
      namespace,
      ['--receiver-addr=127.0.0.1:0', '--events-listen-addr=127.0.0.1:0'],
    ).then((o) => {
      operators = o;
    });
  });
  port = await listening;
  // Every supported Receiver published (Ready), the others refused by their reconciler.
  for (const [name, type] of receivers) {
    if (name === 'r-suspended') continue;
    await eventually(
      `Receiver ${name} reconciled`,
      async () => {
        const r = await client.get<
          KubeObject & { status?: { conditions?: { type: string; status: string }[] } }
        >({
          apiVersion: 'notification.mooring.dev/v1',
          kind: 'Receiver',
          namespace,
          name,
        });
        const ready = r.status?.conditions?.find((c) => c.type === 'Ready')?.status;
        return supported(type) ? ready === 'True' : ready === 'False';
      },
      60_000,
    );
  }
  // The server answers from its own cache, which may lag the status: wait for a signed request.
  await eventually(
    'the webhook server serves the generic Receiver',
    async () => {
      const res = await send({
        method: 'POST',
        target: webhookPath(TOKEN, 'r-generic', namespace),
        headers: [['content-type', 'application/json']],
        body: Buffer.from('{}'),
        framing: 'length',
        ending: 'keep-open',
      });
      if (res.statuses[0] !== 200) throw new Error(`answered ${res.statuses.join(', ') || 'nothing'}`);
      return true;
    },
    60_000,
  );
});

after(async () => {
  await operators?.stop();
  await client?.delete({ apiVersion: 'v1', kind: 'Namespace', name: namespace }).catch(() => {});
});

// ---- raw HTTP ------------------------------------------------------------------------------------

interface RawRequest {
  method: string;
  target: string;
  headers: [string, string][];
  body: Buffer;
  /** How the body is framed: a true Content-Length, chunked, none, or a length that lies. */
  framing:
    | 'length'
    | 'chunked'
    | 'broken-chunked'
    | 'none'
    | 'short'
    | 'long'
    | 'garbage-length'
    | 'two-lengths';
  /**
   * After writing: keep the socket open (the last request says `connection: close`), or half-close
   * it, which node's server takes as the client going away (it may close without an answer).
   */
  ending: 'half-close' | 'keep-open';
  /** Sent on the same connection right after this one. */
  next?: RawRequest;
}

function encode(r: RawRequest, last: boolean): Buffer {
  const headers = [...r.headers];
  let body = r.body;
  switch (r.framing) {
    case 'length':
      headers.push(['content-length', String(body.length)]);
      break;
    case 'short':
      headers.push(['content-length', String(Math.max(0, body.length - 1 - (body.length >> 1)))]);
      break;
    case 'long':
      headers.push(['content-length', String(body.length + 1 + (body.length >> 1))]);
      break;
    case 'garbage-length':
      headers.push([
        'content-length',
        ['-1', '1e3', 'abc', '0x10', ' 5', '99999999999999999999'][body.length % 6]!,
      ]);
      break;
    case 'two-lengths':
      headers.push(['content-length', String(body.length)], ['content-length', String(body.length + 1)]);
      break;
    case 'chunked':
    case 'broken-chunked': {
      headers.push(['transfer-encoding', 'chunked']);
      const chunks: Buffer[] = [];
      for (let i = 0; i < body.length; i += 1000) {
        const c = body.subarray(i, i + 1000);
        chunks.push(Buffer.from(`${c.length.toString(16)}\r\n`), c, Buffer.from('\r\n'));
      }
      chunks.push(Buffer.from(r.framing === 'chunked' ? '0\r\n\r\n' : 'zz\r\n'));
      body = Buffer.concat(chunks);
      break;
    }
    case 'none':
      break;
  }
  if (last && r.ending === 'keep-open') headers.push(['connection', 'close']);
  const head = `${r.method} ${r.target} HTTP/1.1\r\nhost: 127.0.0.1\r\n${headers.map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`;
  return Buffer.concat([Buffer.from(head, 'latin1'), body]);
}

interface RawResponse {
  statuses: number[];
  bytes: number;
  hung: boolean;
}

/** Sends the request (and any pipelined one) on one connection; resolves when the server closes it. */
function send(r: RawRequest): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    const got: Buffer[] = [];
    let hung = false;
    const guard = setTimeout(() => {
      hung = true;
      socket.destroy();
    }, HANG_MS);
    socket.on('data', (d: Buffer) => got.push(d));
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(guard);
      const text = Buffer.concat(got).toString('latin1');
      const statuses = [...text.matchAll(/(?:^|\r\n)HTTP\/1\.[01] (\d{3})/g)].map((m) => Number(m[1]));
      if (process.env.MOORING_FUZZ_VERBOSE) {
        const first = text.split('\r\n\r\n')[1]?.split('\n')[0] ?? '';
        console.error(`answer ${statuses[0] ?? 'none'} ${first.replace(/[0-9a-f]{64}/g, '…').slice(0, 60)}`);
      }
      resolve({ statuses, bytes: text.length, hung });
    });
    socket.on('connect', () => {
      const parts: Buffer[] = [];
      for (let q: RawRequest | undefined = r; q; q = q.next) parts.push(encode(q, q.next === undefined));
      socket.write(Buffer.concat(parts), (err) => {
        if (err) return;
        if (r.ending === 'half-close') socket.end();
      });
    });
    socket.setTimeout(HANG_MS * 2, () => reject(new Error('socket timeout')));
  });
}

// ---- generated requests --------------------------------------------------------------------------

const hmac = (alg: string, body: Buffer, key = TOKEN) => createHmac(alg, key).update(body).digest('hex');

/** A header the sender of one type would send, computed over the body: right, or wrong in one way. */
type Signer = (body: Buffer) => [string, string][];
const signers: Record<string, (ok: boolean, event: string) => Signer> = {
  'generic-hmac': (ok) => (b) => [['x-signature', `sha256=${hmac('sha256', b, ok ? TOKEN : 'nope')}`]],
  github: (ok, event) => (b) => [
    ['x-hub-signature-256', `sha256=${hmac('sha256', b, ok ? TOKEN : 'nope')}`],
    ['x-github-event', event],
    ['x-github-delivery', randomBytes(8).toString('hex')],
  ],
  gitea: (ok, event) => (b) => [
    ['x-hub-signature-256', `sha256=${hmac('sha256', b, ok ? TOKEN : 'nope')}`],
    ['x-gitea-event', event],
  ],
  gitlab: (ok, event) => () => [
    ['x-gitlab-token', ok ? TOKEN : `${TOKEN}x`],
    ['x-gitlab-event', event],
  ],
  bitbucket: (ok, event) => (b) => [
    ['x-hub-signature', `sha256=${hmac('sha256', b, ok ? TOKEN : 'nope')}`],
    ['x-event-key', event],
  ],
  harbor: (ok) => () => [['authorization', ok ? TOKEN : `Bearer ${TOKEN}`]],
  nexus: (ok) => (b) => [['x-nexus-webhook-signature', hmac('sha1', b, ok ? TOKEN : 'nope')]],
  cdevents: (ok, event) => () => [['ce-type', ok ? 'dev.cdevents.change.merged.0.2.0' : event]],
};

const headerName = fc.constantFrom(
  'x-hub-signature-256',
  'x-hub-signature',
  'x-github-event',
  'x-github-delivery',
  'x-gitea-event',
  'x-gitlab-token',
  'x-gitlab-event',
  'idempotency-key',
  'x-event-key',
  'x-request-uuid',
  'authorization',
  'x-signature',
  'x-nexus-webhook-signature',
  'ce-type',
  'content-type',
  'content-encoding',
  'expect',
  'upgrade',
  'connection',
  'transfer-encoding',
  'x-forwarded-for',
  'host',
);
const headerValue = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.constantFrom(
      'sha256=',
      'sha1=0',
      'sha512=zz',
      '=',
      `sha256=${'a'.repeat(64)}`,
      'push',
      'ping',
      'diagnostics:ping',
      'Push Hook',
      'application/json',
      '100-continue',
      'websocket',
      'gzip',
      'keep-alive',
      'chunked',
      'identity, chunked',
      TOKEN,
      '',
      ' ',
    ),
  },
  { weight: 3, arbitrary: fc.string({ maxLength: 40, unit: 'grapheme-ascii' }) },
  {
    weight: 1,
    arbitrary: fc.string({ maxLength: 40, unit: 'binary-ascii' }).map((s) => s.replace(/[\r\n]/g, '')),
  },
  { weight: 1, arbitrary: fc.integer({ min: 100, max: 20_000 }).map((n) => 'v'.repeat(n)) },
);

const jsonBody = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
  fc.constantFrom(
    '{}',
    '[]',
    'null',
    '{"ref":"refs/heads/main","after":"aaaaaaaaaabbbbbbbbbbccccccccccdddddddddd","commits":[{"id":"1"}]}',
    '{"context":{"id":"1","source":"s","type":"dev.cdevents.change.merged.0.2.0","version":"0.4.1"},"subject":{}}',
    '{"context":{"id":"","source":"s","type":"t","version":"v"},"subject":[]}',
    '{"__proto__":{"ok":true},"constructor":{"prototype":{}}}',
  ),
);
const body = fc.oneof(
  { weight: 4, arbitrary: jsonBody.map((s) => Buffer.from(s)) },
  { weight: 2, arbitrary: fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b)) },
  {
    weight: 1,
    arbitrary: fc.integer({ min: MAX_BODY - 10, max: MAX_BODY + 10_000 }).map((n) => Buffer.alloc(n, '{')),
  },
  { weight: 1, arbitrary: fc.constant(Buffer.alloc(0)) },
);

const receiverNames = () => [...receivers.keys()];
const target = fc.oneof(
  { weight: 10, arbitrary: fc.constant('receiver') },
  fc.constantFrom(
    '/',
    '/hook/',
    '/hook/unknown',
    '*',
    '/metrics',
    '/healthz',
    '/hook/../hook/x',
    '//hook',
    'http://127.0.0.1/hook/x',
    '/%00',
    '/hook/%2e%2e',
  ),
  fc.string({ minLength: 1, maxLength: 30 }).map((s) => `/hook/${encodeURIComponent(s)}`),
  fc.integer({ min: 1000, max: 20_000 }).map((n) => `/hook/${'a'.repeat(n)}`),
);
/** A path derived from a real one: the real path, or with a query, a suffix, another case. */
const pathVariant = fc.oneof(
  { weight: 8, arbitrary: fc.constant('exact' as const) },
  fc.constantFrom(
    'query' as const,
    'slash' as const,
    'upper' as const,
    'prefix' as const,
    'fragment' as const,
  ),
);

const request = fc.record({
  receiver: fc.nat(),
  target,
  variant: pathVariant,
  method: fc.oneof(
    { weight: 10, arbitrary: fc.constant('POST') },
    fc.constantFrom(
      'GET',
      'PUT',
      'HEAD',
      'OPTIONS',
      'DELETE',
      'PATCH',
      'post',
      'TRACE',
      'PRI',
      'BREW',
      'GET /x',
    ),
  ),
  signature: fc.constantFrom('valid', 'valid', 'wrong', 'none'),
  event: fc.constantFrom('push', 'ping', 'Push Hook', 'diagnostics:ping', 'PUSH', 'tag_push', ''),
  headers: fc.array(fc.tuple(headerName, headerValue), { maxLength: 4 }),
  body,
  framing: fc.oneof(
    { weight: 30, arbitrary: fc.constant('length' as const) },
    fc.constantFrom(
      'chunked' as const,
      'broken-chunked' as const,
      'none' as const,
      'short' as const,
      'long' as const,
      'garbage-length' as const,
      'two-lengths' as const,
    ),
  ),
  ending: fc.oneof(
    { weight: 6, arbitrary: fc.constant('keep-open' as const) },
    fc.constant('half-close' as const),
  ),
  pipelined: fc.boolean(),
});

function materialize(g: typeof request extends fc.Arbitrary<infer T> ? T : never): RawRequest {
  const names = receiverNames();
  const name = names[g.receiver % names.length]!;
  const type = receivers.get(name)!;
  let path = g.target;
  if (g.target === 'receiver') {
    const real = webhookPath(TOKEN, name, namespace);
    path = {
      exact: real,
      query: `${real}?x=1&token=${TOKEN}`,
      slash: `${real}/`,
      upper: real.toUpperCase(),
      prefix: real.slice(0, -1),
      fragment: `${real}#x`,
    }[g.variant]!;
  }
  const signer = signers[type];
  const signed: [string, string][] =
    signer && g.signature !== 'none' ? signer(g.signature === 'valid', g.event)(g.body) : [];
  const raw: RawRequest = {
    method: g.method,
    target: path,
    headers: [...signed, ...g.headers],
    body: g.body,
    framing: g.framing,
    ending: g.ending,
  };
  if (g.pipelined) {
    raw.next = {
      ...raw,
      headers: signer ? signer(true, 'push')(Buffer.from('{}')) : [],
      body: Buffer.from('{}'),
      framing: 'length',
      next: undefined,
    };
  }
  return raw;
}

const statuses = new Map<number, number>();

async function checkRequest(raw: RawRequest): Promise<void> {
  const res = await send(raw);
  for (const s of res.statuses) statuses.set(s, (statuses.get(s) ?? 0) + 1);
  if (res.statuses.length === 0) statuses.set(0, (statuses.get(0) ?? 0) + 1);
  assert.equal(res.hung, false, `the connection was neither answered nor closed in ${HANG_MS} ms`);
  const bad = res.statuses.filter((s) => s >= 500 && s !== 503);
  assert.deepEqual(bad, [], `the server answered ${bad.join(', ')}`);
}

describe('fuzz: Receiver webhook server', () => {
  test('random requests to every Receiver type: never a 5xx but 503, never a hang', async (t) => {
    await check(
      t,
      import.meta.url,
      fc.asyncProperty(request, (g) => checkRequest(materialize(g))),
      600,
    );
    t.diagnostic(
      `answers: ${[...statuses]
        .sort((a, b) => a[0] - b[0])
        .map(([s, n]) => `${s || 'none'}×${n}`)
        .join(' ')}`,
    );
  });

  test('the server still takes a signed webhook and triggers the resource', async () => {
    const pushed = Buffer.from(
      JSON.stringify({ ref: 'refs/heads/main', after: randomBytes(20).toString('hex') }),
    );
    const res = await send({
      method: 'POST',
      target: webhookPath(TOKEN, 'r-github', namespace),
      headers: [...signers.github!(true, 'push')(pushed), ['content-type', 'application/json']],
      body: pushed,
      framing: 'length',
      ending: 'keep-open',
    });
    assert.deepEqual(res.statuses, [200]);
    const repo = await client.get({
      apiVersion: 'source.mooring.dev/v1',
      kind: 'GitRepository',
      namespace,
      name: 'app',
    });
    assert.ok(
      repo.metadata.annotations?.['reconcile.mooring.dev/requestedAt'],
      'the GitRepository was asked to reconcile',
    );
  });
});

describe('fuzz corpus: raw webhook requests', () => {
  const bugs = knownBugs('receivers');
  // Each file is one raw request; `{{path:<receiver>}}` stands for that Receiver's webhook path.
  for (const [name, bytes] of corpusFiles('receivers')) {
    test(name, { todo: bugs[name] }, async () => {
      const text = bytes
        .toString('latin1')
        .replace(/\{\{path:([a-z-]+)\}\}/g, (_, r: string) => webhookPath(TOKEN, r, namespace));
      const res = await new Promise<RawResponse>((resolve) => {
        const socket = connect({ host: '127.0.0.1', port });
        const got: Buffer[] = [];
        socket.on('data', (d: Buffer) => got.push(d));
        socket.on('error', () => {});
        socket.on('close', () => {
          const s = Buffer.concat(got).toString('latin1');
          resolve({
            statuses: [...s.matchAll(/(?:^|\r\n)HTTP\/1\.[01] (\d{3})/g)].map((m) => Number(m[1])),
            bytes: s.length,
            hung: false,
          });
        });
        socket.on('connect', () => socket.write(Buffer.from(text, 'latin1')));
      });
      assert.deepEqual(
        res.statuses.filter((s) => s >= 500 && s !== 503),
        [],
      );
    });
  }
});
