import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { request } from 'node:http';
import { PassThrough } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { RECONCILE_REQUESTED_AT_ANNOTATION } from '@mooring/api';
import {
  createLogger,
  type KubeClient,
  type KubeObject,
  parseOperatorOptions,
  runOperators,
} from '@mooring/runtime';
import { eventually, testCluster, testNamespace } from '@mooring/test/harness';
import { NOTIFICATION_FLAGS, type NotificationPorts, notificationOperator } from '../src/index.ts';
import { webhookPath } from '../src/webhook-path.ts';
import { startSink } from './http-sink.ts';

// Recognisable secrets: no log line, status, event or answer may ever contain them.
const PROVIDER_TOKEN = 'prov-SECRET-a81f2c';
const HOOK_TOKEN = 'hook-SECRET-5d0e9b';
const SHA = 'aaaaaaaaaabbbbbbbbbbccccccccccdddddddddd';

let client: KubeClient;
let ports: NotificationPorts;
const logs: string[] = [];
const stop = new AbortController();
let running: Promise<number>;

before(async () => {
  client = (await testCluster()).client;
  const log = new PassThrough();
  log.on('data', (b: Buffer) => logs.push(b.toString()));
  const options = parseOperatorOptions(
    [
      '--metrics-addr=127.0.0.1:0',
      '--health-addr=127.0.0.1:0',
      '--receiver-addr=127.0.0.1:0',
      '--events-listen-addr=127.0.0.1:0',
      '--log-level=debug',
    ],
    { KUBECONFIG: process.env.KUBECONFIG },
    { extraFlags: NOTIFICATION_FLAGS },
  );
  const listening = new Promise<NotificationPorts>((resolve) => {
    running = runOperators(
      [
        notificationOperator({
          onListening: resolve,
          log: createLogger({ level: 'debug', name: 'notification-test', destination: log }),
          send: { attempts: 3, baseDelayMs: 20, maxDelayMs: 50 },
          receiverLimits: { maxBodyBytes: 64 * 1024, perSource: { perSecond: 1000, burst: 1000 } },
        }),
      ],
      options,
      { shutdown: stop.signal },
    );
  });
  ports = await listening;
});

after(async () => {
  stop.abort();
  assert.equal(await running, 0);
  const all = logs.join('');
  assert.ok(!all.includes(PROVIDER_TOKEN) && !all.includes(HOOK_TOKEN), 'no token in the logs');
});

function post(port: number, path: string, body: string | Buffer, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const secret = (namespace: string, name: string, data: Record<string, string>): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { namespace, name },
  stringData: data,
});

const readyOf = (obj: KubeObject) =>
  (
    obj.status as
      | { conditions?: { type: string; status: string; reason: string; message: string }[] }
      | undefined
  )?.conditions?.find((c) => c.type === 'Ready');

async function readyCondition(kind: string, namespace: string, name: string, status: 'True' | 'False') {
  return eventually(
    `${kind} ${name} Ready=${status}`,
    async () => {
      const obj = await client.get({ apiVersion: 'notification.mooring.dev/v1', kind, namespace, name });
      const c = readyOf(obj);
      return c?.status === status ? { obj, c } : undefined;
    },
    20_000,
  );
}

function event(namespace: string, message: string, extra: Record<string, unknown> = {}) {
  return {
    involvedObject: {
      kind: 'Kustomization',
      namespace,
      name: 'web',
      uid: 'u-1',
      apiVersion: 'kustomize.mooring.dev/v1',
    },
    severity: 'info',
    timestamp: '2026-01-02T03:04:05Z',
    message,
    reason: 'ReconciliationSucceeded',
    metadata: { 'kustomize.mooring.dev/revision': `main@sha1:${SHA}`, 'kustomize.mooring.dev/checksum': 'x' },
    reportingController: 'mooring-kustomize',
    ...extra,
  };
}

describe('notification operator against the real API server', () => {
  test('an event reaches a generic-hmac Provider through a matching Alert, signed, exactly once', async (t) => {
    const ns = await testNamespace(t, 'alert-flow');
    const sink = await startSink(t);
    await client.create(secret(ns, 'hmac', { token: PROVIDER_TOKEN }));
    await client.create({
      apiVersion: 'notification.mooring.dev/v1',
      kind: 'Provider',
      metadata: { namespace: ns, name: 'hook' },
      spec: { type: 'generic-hmac', address: `${sink.url}/in`, secretRef: { name: 'hmac' } },
    });
    await client.create({
      apiVersion: 'notification.mooring.dev/v1',
      kind: 'Alert',
      metadata: { namespace: ns, name: 'all' },
      spec: {
        providerRef: { name: 'hook' },
        eventSources: [{ kind: 'Kustomization', name: '*' }],
        exclusionList: ['^ignored'],
        eventMetadata: { cluster: 'test' },
      },
    });
    const provider = await readyCondition('Provider', ns, 'hook', 'True');
    await readyCondition('Alert', ns, 'all', 'True');
    assert.ok(!JSON.stringify(provider.obj).includes(PROVIDER_TOKEN));

    const ok = await post(ports.events, '/', JSON.stringify(event(ns, 'Applied revision main')));
    assert.equal(ok.status, 202);
    const [got] = await sink.received(1);
    assert.equal(got!.url, '/in');
    assert.equal(got!.headers['gotk-component'], 'mooring-kustomize');
    assert.equal(
      got!.headers['x-signature'],
      `sha256=${createHmac('sha256', PROVIDER_TOKEN).update(got!.body).digest('hex')}`,
    );
    assert.deepEqual(JSON.parse(got!.body), {
      ...event(ns, 'Applied revision main'),
      // Prefixes stripped, checksum dropped, the Alert's metadata merged under the operator's.
      metadata: { cluster: 'test', revision: `main@sha1:${SHA}` },
    });

    const dup = await post(ports.events, '/', JSON.stringify(event(ns, 'Applied revision main')));
    assert.equal(dup.status, 429, 'the same event within the rate-limit interval is a duplicate');
    const excluded = await post(ports.events, '/', JSON.stringify(event(ns, 'ignored: noise')));
    assert.equal(excluded.status, 202);
    const other = await post(ports.events, '/', JSON.stringify(event('elsewhere', 'Applied revision main')));
    assert.equal(other.status, 202);
    // Give the dispatches time to (not) arrive.
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(sink.requests.length, 1, 'excluded and other-namespace events are not sent');
  });

  test('the event server refuses bad bodies: 400 malformed, 400 not an event, 413 oversized', async () => {
    assert.equal((await post(ports.events, '/', '{"involvedObject": ')).status, 400);
    const notEvent = await post(ports.events, '/', JSON.stringify({ involvedObject: { kind: 'X' } }));
    assert.equal(notEvent.status, 400);
    assert.match(notEvent.text, /involvedObject\.name/);
    const big = await post(ports.events, '/', Buffer.alloc(3 * 1024 * 1024 + 1, 0x20));
    assert.equal(big.status, 413);
  });

  test('an invalid exclusion regex stalls the Alert with a clear condition instead of crashing', async (t) => {
    const ns = await testNamespace(t, 'alert-invalid');
    await client.create({
      apiVersion: 'notification.mooring.dev/v1',
      kind: 'Alert',
      metadata: { namespace: ns, name: 'broken' },
      spec: {
        providerRef: { name: 'none' },
        eventSources: [{ kind: 'Kustomization', name: '*' }],
        exclusionList: ['(unclosed'],
      },
    });
    const { c } = await readyCondition('Alert', ns, 'broken', 'False');
    assert.equal(c.reason, 'InvalidConfig');
    assert.match(c.message, /exclusionList\[0\] "\(unclosed" is not a valid regular expression/);
    const recorded = await eventually('a Warning event on the Alert', async () => {
      const list = await client.list('v1', 'Event', {
        namespace: ns,
        fieldSelector: 'involvedObject.name=broken',
      });
      return list.items.find((e) => e.reason === 'InvalidConfig');
    });
    assert.equal(recorded.type, 'Warning');
  });

  test('Receivers of unsupported types or without their token say so in Ready', async (t) => {
    const ns = await testNamespace(t, 'receiver-invalid');
    await client.create(secret(ns, 'no-token', { other: HOOK_TOKEN }));
    const receiver = (name: string, type: string, secretName: string) =>
      client.create({
        apiVersion: 'notification.mooring.dev/v1',
        kind: 'Receiver',
        metadata: { namespace: ns, name },
        spec: { type, secretRef: { name: secretName }, resources: [{ kind: 'GitRepository', name: 'app' }] },
      });
    await receiver('gcr', 'gcr', 'no-token');
    await receiver('missing', 'github', 'absent');
    await receiver('keyless', 'github', 'no-token');
    const gcr = await readyCondition('Receiver', ns, 'gcr', 'False');
    assert.equal(gcr.c.reason, 'ValidationFailed');
    assert.match(gcr.c.message, /type gcr is not supported/);
    const missing = await readyCondition('Receiver', ns, 'missing', 'False');
    assert.equal(missing.c.reason, 'TokenNotFound');
    assert.match(missing.c.message, /Secret .*\/absent was not found/);
    const keyless = await readyCondition('Receiver', ns, 'keyless', 'False');
    assert.equal(keyless.c.reason, 'TokenNotFound');
    assert.match(keyless.c.message, /has no 'token' key/);
    for (const r of [gcr, missing, keyless])
      assert.equal((r.obj.status as { webhookPath?: string }).webhookPath, undefined);
  });

  test('a Provider whose Secret is missing reports it, and becomes Ready when it appears', async (t) => {
    const ns = await testNamespace(t, 'provider-secret');
    await client.create({
      apiVersion: 'notification.mooring.dev/v1',
      kind: 'Provider',
      metadata: { namespace: ns, name: 'slack' },
      spec: {
        type: 'slack',
        address: 'https://slack.example/api/chat.postMessage',
        secretRef: { name: 'slack-token' },
      },
    });
    const { c } = await readyCondition('Provider', ns, 'slack', 'False');
    assert.equal(c.reason, 'SecretNotFound');
    assert.match(c.message, new RegExp(`Secret ${ns}/slack-token was not found`));
    await client.create(secret(ns, 'slack-token', { token: PROVIDER_TOKEN }));
    const ready = await readyCondition('Provider', ns, 'slack', 'True');
    assert.ok(!JSON.stringify(ready.obj).includes(PROVIDER_TOKEN));
  });

  test('a signed GitHub push sets requestedAt on the GitRepository; unsigned, wrong or oversized requests change nothing', async (t) => {
    const ns = await testNamespace(t, 'receiver');
    await client.create(secret(ns, 'hook-token', { token: HOOK_TOKEN }));
    await client.create({
      apiVersion: 'source.mooring.dev/v1',
      kind: 'GitRepository',
      metadata: { namespace: ns, name: 'app' },
      spec: { url: 'https://git.example/org/app.git', interval: '10m', ref: { branch: 'main' } },
    });
    await client.create({
      apiVersion: 'notification.mooring.dev/v1',
      kind: 'Receiver',
      metadata: { namespace: ns, name: 'github' },
      spec: {
        type: 'github',
        events: ['push'],
        secretRef: { name: 'hook-token' },
        resources: [{ kind: 'GitRepository', name: 'app' }],
      },
    });
    const { obj, c } = await readyCondition('Receiver', ns, 'github', 'True');
    const path = webhookPath(HOOK_TOKEN, 'github', ns);
    assert.equal((obj.status as { webhookPath?: string }).webhookPath, path);
    assert.equal(c.reason, 'Succeeded');
    assert.ok(!JSON.stringify(obj).includes(HOOK_TOKEN));

    const repoAnnotation = async () =>
      (
        await client.get({
          apiVersion: 'source.mooring.dev/v1',
          kind: 'GitRepository',
          namespace: ns,
          name: 'app',
        })
      ).metadata.annotations?.[RECONCILE_REQUESTED_AT_ANNOTATION];
    const push = JSON.stringify({ ref: 'refs/heads/main', after: SHA, repository: { full_name: 'org/app' } });
    const sig = (key: string, body: string) =>
      `sha256=${createHmac('sha256', key).update(body).digest('hex')}`;

    const unsigned = await post(ports.receiver, path, push, { 'x-github-event': 'push' });
    assert.equal(unsigned.status, 401);
    const wrong = await post(ports.receiver, path, push, {
      'x-github-event': 'push',
      'x-hub-signature-256': sig('guess', push),
    });
    assert.equal(wrong.status, 401);
    assert.ok(!wrong.text.includes(HOOK_TOKEN));
    const big = `{"pad":"${'x'.repeat(70 * 1024)}"}`;
    const oversized = await post(ports.receiver, path, big, {
      'x-github-event': 'push',
      'x-hub-signature-256': sig(HOOK_TOKEN, big),
    });
    assert.equal(oversized.status, 413);
    const issue = await post(ports.receiver, path, push, {
      'x-github-event': 'issues',
      'x-hub-signature-256': sig(HOOK_TOKEN, push),
    });
    assert.equal(issue.status, 400, 'an event type outside spec.events is refused');
    assert.equal((await post(ports.receiver, `/hook/${'0'.repeat(64)}`, push)).status, 404);
    assert.equal(await repoAnnotation(), undefined, 'no refused request touched the GitRepository');

    const signed = await post(ports.receiver, path, push, {
      'x-github-event': 'push',
      'x-hub-signature-256': sig(HOOK_TOKEN, push),
    });
    assert.equal(signed.status, 200);
    const value = await repoAnnotation();
    assert.ok(value && !Number.isNaN(Date.parse(value)), `requestedAt is a time, got ${value}`);
  });

  test('every Receiver type: a request signed as its sender signs it triggers, a forged one does not', async (t) => {
    const ns = await testNamespace(t, 'receiver-types');
    await client.create(secret(ns, 'tok', { token: HOOK_TOKEN }));
    const body = JSON.stringify({
      context: { id: '1', source: '/ci', type: 'dev.cdevents.change.merged.0.1.2', version: '0.3.0' },
      subject: { id: 's' },
    });
    const mac = (alg: string, key: string) => createHmac(alg, key).update(body).digest('hex');
    // type → [headers signed with the token, the same signed with a wrong key (undefined: nothing to forge)]
    const sign: Record<string, (key: string) => Record<string, string>> = {
      generic: () => ({}),
      'generic-hmac': (k) => ({ 'x-signature': `sha512=${mac('sha512', k)}` }),
      github: (k) => ({ 'x-hub-signature-256': `sha256=${mac('sha256', k)}`, 'x-github-event': 'push' }),
      gitlab: (k) => ({ 'x-gitlab-token': k, 'x-gitlab-event': 'Push Hook' }),
      bitbucket: (k) => ({ 'x-hub-signature': `sha256=${mac('sha256', k)}`, 'x-event-key': 'repo:push' }),
      harbor: (k) => ({ authorization: k }),
      nexus: (k) => ({ 'x-nexus-webhook-signature': mac('sha1', k) }),
      dockerhub: () => ({}),
      quay: () => ({}),
      cdevents: () => ({ 'ce-type': 'dev.cdevents.change.merged.0.1.2' }),
    };
    const unsigned = new Set(['generic', 'dockerhub', 'quay', 'cdevents']);
    for (const type of Object.keys(sign)) {
      await client.create({
        apiVersion: 'source.mooring.dev/v1',
        kind: 'GitRepository',
        metadata: { namespace: ns, name: `repo-${type}` },
        spec: { url: 'https://git.example/x.git', interval: '1h' },
      });
      await client.create({
        apiVersion: 'notification.mooring.dev/v1',
        kind: 'Receiver',
        metadata: { namespace: ns, name: type },
        spec: {
          type,
          secretRef: { name: 'tok' },
          resources: [{ kind: 'GitRepository', name: `repo-${type}` }],
        },
      });
    }
    for (const type of Object.keys(sign)) {
      await readyCondition('Receiver', ns, type, 'True');
      const path = webhookPath(HOOK_TOKEN, type, ns);
      const annotation = async () =>
        (
          await client.get({
            apiVersion: 'source.mooring.dev/v1',
            kind: 'GitRepository',
            namespace: ns,
            name: `repo-${type}`,
          })
        ).metadata.annotations?.[RECONCILE_REQUESTED_AT_ANNOTATION];
      if (!unsigned.has(type)) {
        const forged = await post(ports.receiver, path, body, sign[type]!('not-the-token'));
        assert.equal(forged.status, 401, `${type}: forged`);
        assert.equal(await annotation(), undefined, `${type}: nothing triggered by a forgery`);
      }
      const ok = await post(ports.receiver, path, body, sign[type]!(HOOK_TOKEN));
      assert.equal(ok.status, 200, `${type}: signed (${ok.text.trim()})`);
      assert.ok(await annotation(), `${type}: requestedAt set`);
    }
  });

  test('garbage payloads signed or not never crash the webhook server', async (t) => {
    const ns = await testNamespace(t, 'receiver-fuzz');
    await client.create(secret(ns, 'tok', { token: HOOK_TOKEN }));
    for (const type of ['gitlab', 'bitbucket']) {
      await client.create({
        apiVersion: 'notification.mooring.dev/v1',
        kind: 'Receiver',
        metadata: { namespace: ns, name: type },
        spec: { type, secretRef: { name: 'tok' }, resources: [{ kind: 'GitRepository', name: 'missing' }] },
      });
      await readyCondition('Receiver', ns, type, 'True');
    }
    const bodies = [
      '',
      'null',
      '[',
      '{"changes":[]}',
      '{"repository":null}',
      `${'['.repeat(10_000)}`,
      '\u0000\uffff',
      '{"ref":1e400}',
    ];
    for (const body of bodies) {
      const gl = await post(ports.receiver, webhookPath(HOOK_TOKEN, 'gitlab', ns), body, {
        'x-gitlab-token': 'nope',
      });
      assert.equal(gl.status, 401);
      const bb = await post(ports.receiver, webhookPath(HOOK_TOKEN, 'bitbucket', ns), body, {
        'x-hub-signature': `sha256=${createHmac('sha256', HOOK_TOKEN).update(body).digest('hex')}`,
      });
      // Verified, but the named GitRepository does not exist: a clean 500, and the server lives on.
      assert.equal(bb.status, 500);
      assert.ok(!bb.text.includes(HOOK_TOKEN));
    }
  });
});
