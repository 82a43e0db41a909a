import assert from 'node:assert/strict';
import { createHash, createHmac } from 'node:crypto';
import { describe, test } from 'node:test';
import { type Recorded, startSink } from '../../test/http-sink.ts';
import { sendRequest } from './http-sender.ts';
import { PAYLOAD_BUILDERS } from './index.ts';
import type { Notification, ProviderConfig } from './types.ts';

const SHA = '0123456789abcdef0123456789abcdef01234567';
const TOKEN = 'tok-SECRET-7f3a';

const notification: Notification = {
  alert: { name: 'on-call', namespace: 'apps' },
  event: {
    involvedObject: {
      kind: 'Kustomization',
      namespace: 'apps',
      name: 'web',
      uid: 'u1',
      apiVersion: 'kustomize.mooring.dev/v1',
    },
    severity: 'error',
    timestamp: '2026-01-02T03:04:05Z',
    message: 'Health check failed',
    reason: 'HealthCheckFailed',
    metadata: { revision: `main@sha1:${SHA}`, summary: 'prod' },
    reportingController: 'mooring-kustomize',
  },
};

const config = (type: string, address: string, extra: Partial<ProviderConfig> = {}): ProviderConfig => ({
  type,
  name: 'p',
  namespace: 'apps',
  uid: 'provider-uid',
  address,
  headers: {},
  timeoutMs: 2_000,
  token: TOKEN,
  ...extra,
});

interface Case {
  type: string;
  /** Path of the address under the sink, or the whole config. */
  address?: string;
  extra?: Partial<ProviderConfig>;
  method?: string;
  path: string;
  headers: Record<string, string>;
  body: unknown;
}

const slackAttachment = {
  color: 'danger',
  author_name: 'kustomization/web.apps',
  text: 'Health check failed',
  mrkdwn_in: ['text'],
  fields: [
    { title: 'revision', value: `main@sha1:${SHA}`, short: false },
    { title: 'summary', value: 'prod', short: false },
  ],
};

const CASES: Case[] = [
  {
    type: 'generic',
    address: '/hook',
    extra: { token: undefined, basicAuth: { username: 'u', password: 'p' }, headers: { 'x-team': 'web' } },
    path: '/hook',
    headers: {
      'gotk-component': 'mooring-kustomize',
      authorization: `Basic ${Buffer.from('u:p').toString('base64')}`,
      'x-team': 'web',
    },
    body: notification.event,
  },
  {
    type: 'generic-hmac',
    address: '/hook',
    path: '/hook',
    headers: {
      'gotk-component': 'mooring-kustomize',
      'x-signature': `sha256=${createHmac('sha256', TOKEN).update(JSON.stringify(notification.event)).digest('hex')}`,
    },
    body: notification.event,
  },
  {
    type: 'slack',
    address: '/api/chat.postMessage',
    extra: { channel: 'alerts', username: 'mooring' },
    path: '/api/chat.postMessage',
    headers: { authorization: `Bearer ${TOKEN}` },
    body: { channel: 'alerts', username: 'mooring', attachments: [slackAttachment] },
  },
  {
    type: 'rocket',
    address: '/hooks/abc',
    extra: { token: undefined },
    path: '/hooks/abc',
    headers: {},
    body: { attachments: [slackAttachment] },
  },
  {
    type: 'discord',
    address: '/api/webhooks/1/xyz',
    extra: { token: undefined, username: 'mooring' },
    path: '/api/webhooks/1/xyz/slack',
    headers: {},
    body: { username: 'mooring', attachments: [slackAttachment] },
  },
  {
    type: 'msteams',
    address: '/workflows/1',
    extra: { token: undefined },
    path: '/workflows/1',
    headers: {},
    body: {
      type: 'message',
      attachments: [
        {
          contentType: 'application/vnd.microsoft.card.adaptive',
          content: {
            $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
            type: 'AdaptiveCard',
            version: '1.4',
            body: [
              {
                type: 'TextBlock',
                text: 'kustomization/web.apps',
                weight: 'bolder',
                size: 'medium',
                wrap: true,
                color: 'attention',
              },
              { type: 'TextBlock', text: 'Health check failed', wrap: true },
              {
                type: 'FactSet',
                facts: [
                  { title: 'revision', value: `main@sha1:${SHA}` },
                  { title: 'summary', value: 'prod' },
                ],
              },
            ],
          },
        },
      ],
    },
  },
  {
    type: 'googlechat',
    address: '/v1/spaces/S/messages?key=k',
    extra: { token: undefined },
    path: '/v1/spaces/S/messages?key=k',
    headers: {},
    body: {
      cardsV2: [
        {
          cardId: 'Kustomization-apps-web',
          card: {
            header: { title: 'kustomization/web.apps', subtitle: 'mooring-kustomize' },
            sections: [
              { widgets: [{ textParagraph: { text: 'Health check failed' } }] },
              {
                widgets: [
                  { decoratedText: { topLabel: 'revision', text: `main@sha1:${SHA}` } },
                  { decoratedText: { topLabel: 'summary', text: 'prod' } },
                ],
              },
            ],
          },
        },
      ],
    },
  },
  {
    type: 'webex',
    address: '/v1/messages',
    extra: { channel: 'room-1' },
    path: '/v1/messages',
    headers: { authorization: `Bearer ${TOKEN}` },
    body: {
      roomId: 'room-1',
      markdown: `💣 **kustomization/web.apps**\n\nHealth check failed\n* revision: main@sha1:${SHA}\n* summary: prod`,
    },
  },
  {
    type: 'telegram',
    address: '',
    extra: { channel: '-100123' },
    path: `/bot${TOKEN}/sendMessage`,
    headers: {},
    body: {
      chat_id: '-100123',
      text: `💣 kustomization/web.apps\nHealth check failed\nrevision: main@sha1:${SHA}\nsummary: prod`,
    },
  },
  {
    type: 'matrix',
    address: '',
    extra: { channel: '!room:example.org' },
    method: 'PUT',
    path: '/_matrix/client/v3/rooms/!room%3Aexample.org/send/m.room.message/',
    headers: { authorization: `Bearer ${TOKEN}` },
    body: {
      msgtype: 'm.text',
      body: `💣 kustomization/web.apps\nHealth check failed\nrevision: main@sha1:${SHA}\nsummary: prod`,
    },
  },
  {
    type: 'alertmanager',
    address: '/api/v2/alerts',
    extra: { token: undefined },
    path: '/api/v2/alerts',
    headers: {},
    body: [
      {
        labels: {
          revision: `main@sha1:${SHA}`,
          alertname: 'MooringKustomizationHealthCheckFailed',
          severity: 'error',
          reason: 'HealthCheckFailed',
          kind: 'Kustomization',
          name: 'web',
          namespace: 'apps',
          reportingController: 'mooring-kustomize',
        },
        annotations: { message: 'Health check failed', summary: 'prod' },
        startsAt: '2026-01-02T03:04:05Z',
      },
    ],
  },
  {
    type: 'grafana',
    address: '/api/annotations',
    path: '/api/annotations',
    headers: { authorization: `Bearer ${TOKEN}` },
    body: {
      time: Date.parse('2026-01-02T03:04:05Z'),
      text: 'kustomization/web.apps: Health check failed',
      tags: [
        'mooring',
        'mooring-kustomize',
        'kind:Kustomization',
        'name:web',
        'namespace:apps',
        'severity:error',
        `revision:main@sha1:${SHA}`,
        'summary:prod',
      ],
    },
  },
  {
    type: 'pagerduty',
    address: '',
    extra: { channel: 'routing-key-1', token: undefined },
    path: '/v2/enqueue',
    headers: {},
    body: {
      routing_key: 'routing-key-1',
      event_action: 'trigger',
      dedup_key: 'Kustomization/apps/web',
      payload: {
        summary: 'kustomization/web.apps: Health check failed',
        source: 'mooring-kustomize',
        severity: 'error',
        timestamp: '2026-01-02T03:04:05Z',
        component: 'web',
        group: 'apps',
        class: 'Kustomization',
        custom_details: { revision: `main@sha1:${SHA}`, summary: 'prod' },
      },
    },
  },
  {
    type: 'opsgenie',
    address: '/v2/alerts',
    path: '/v2/alerts',
    headers: { authorization: `GenieKey ${TOKEN}` },
    body: {
      message: 'kustomization/web.apps: Health check failed',
      description: 'Health check failed',
      alias: 'Kustomization/apps/web',
      source: 'mooring-kustomize',
      priority: 'P3',
      tags: ['error', 'Kustomization'],
      details: { revision: `main@sha1:${SHA}`, summary: 'prod' },
    },
  },
  {
    type: 'github',
    address: '/org/app.git',
    path: `/api/v3/repos/org/app/statuses/${SHA}`,
    headers: { authorization: `Bearer ${TOKEN}`, accept: 'application/vnd.github+json' },
    body: { state: 'failure', context: 'kustomization/web', description: 'Health check failed' },
  },
  {
    type: 'gitlab',
    address: '/group/sub/app',
    path: `/api/v4/projects/group%2Fsub%2Fapp/statuses/${SHA}`,
    headers: { 'private-token': TOKEN },
    body: { state: 'failed', name: 'kustomization/web', description: 'Health check failed' },
  },
  {
    type: 'gitea',
    address: '/org/app',
    path: `/api/v1/repos/org/app/statuses/${SHA}`,
    headers: { authorization: `token ${TOKEN}` },
    body: { state: 'failure', context: 'kustomization/web', description: 'Health check failed' },
  },
  {
    type: 'bitbucket',
    address: '/ws/app',
    extra: { token: 'user:app-password' },
    path: `/2.0/repositories/ws/app/commit/${SHA}/statuses/build`,
    headers: { authorization: `Basic ${Buffer.from('user:app-password').toString('base64')}` },
    body: {
      state: 'FAILED',
      key: createHash('sha1').update('kustomization/web').digest('hex'),
      name: 'kustomization/web',
      description: 'Health check failed',
      url: '<address>',
    },
  },
];

describe('provider payloads, posted to a loopback sink', () => {
  test('every listed provider type has a case here', () => {
    assert.deepEqual(CASES.map((c) => c.type).sort(), Object.keys(PAYLOAD_BUILDERS).sort());
  });

  for (const c of CASES) {
    test(`${c.type}: the documented method, path, auth headers and body`, async (t) => {
      const sink = await startSink(t);
      const address = `${sink.url}${c.address ?? ''}`;
      const p = config(
        c.type,
        c.type === 'telegram' || c.type === 'pagerduty' || c.type === 'matrix' ? sink.url : address,
        c.extra,
      );
      const req = PAYLOAD_BUILDERS[c.type]!(notification, p);
      assert.ok(req, 'the builder takes the event');
      await sendRequest(req, p, { attempts: 1 });
      const [got] = (await sink.received(1)) as [Recorded];
      assert.equal(got.method, c.method ?? 'POST');
      if (c.type === 'matrix')
        assert.match(
          got.url,
          /^\/_matrix\/client\/v3\/rooms\/!room%3Aexample\.org\/send\/m\.room\.message\/[0-9a-f]{64}$/,
        );
      else assert.equal(got.url, c.path);
      assert.equal(got.headers['content-type'], 'application/json');
      for (const [k, v] of Object.entries(c.headers)) assert.equal(got.headers[k], v, `header ${k}`);
      const expected = JSON.parse(JSON.stringify(c.body).replaceAll('"<address>"', JSON.stringify(address)));
      assert.deepEqual(JSON.parse(got.body), expected);
    });
  }

  test('chat providers drop commit-status updates; git providers skip events without a commit', () => {
    const update: Notification = {
      ...notification,
      event: { ...notification.event, metadata: { commit_status: 'update' } },
    };
    for (const type of ['slack', 'msteams', 'discord', 'alertmanager', 'opsgenie']) {
      assert.equal(PAYLOAD_BUILDERS[type]!(update, config(type, 'http://x/y/z')), undefined, type);
    }
    const noCommit: Notification = {
      ...notification,
      event: { ...notification.event, metadata: { revision: 'v1.0.0' } },
    };
    for (const type of ['github', 'gitlab', 'gitea', 'bitbucket']) {
      assert.equal(
        PAYLOAD_BUILDERS[type]!(noCommit, config(type, 'http://x/o/r', { token: 'a:b' })),
        undefined,
        type,
      );
    }
  });

  test('info events: github success, pagerduty resolve, alertmanager resolved at once', () => {
    const info: Notification = {
      ...notification,
      event: { ...notification.event, severity: 'info', reason: 'ReconciliationSucceeded' },
    };
    const gh = PAYLOAD_BUILDERS.github!(info, config('github', 'https://github.com/org/app'))!;
    assert.equal(gh.url, `https://api.github.com/repos/org/app/statuses/${SHA}`);
    assert.equal(JSON.parse(gh.body).state, 'success');
    const pd = PAYLOAD_BUILDERS.pagerduty!(info, config('pagerduty', '', { channel: 'rk' }))!;
    assert.equal(pd.url, 'https://events.pagerduty.com/v2/enqueue');
    assert.deepEqual(JSON.parse(pd.body), {
      routing_key: 'rk',
      event_action: 'resolve',
      dedup_key: 'Kustomization/apps/web',
    });
    const am = JSON.parse(PAYLOAD_BUILDERS.alertmanager!(info, config('alertmanager', 'http://am'))!.body);
    assert.equal(am[0].endsAt, '2026-01-02T03:04:05Z');
  });
});

describe('sending', () => {
  const req = (url: string) => ({
    method: 'POST' as const,
    url,
    headers: { 'content-type': 'application/json' },
    body: '{}',
  });
  const fast = { baseDelayMs: 10, maxDelayMs: 20 };

  test('retries a 5xx and succeeds on the third attempt', async (t) => {
    const sink = await startSink(t, (n) => (n < 3 ? 503 : 200));
    assert.equal(await sendRequest(req(sink.url), { timeoutMs: 2_000 }, { attempts: 4, ...fast }), 200);
    assert.equal(sink.requests.length, 3);
  });

  test('gives up after the bounded number of attempts', async (t) => {
    const sink = await startSink(t, () => 500);
    await assert.rejects(
      sendRequest(req(sink.url), { timeoutMs: 2_000 }, { attempts: 4, ...fast }),
      /HTTP 500 \(after 4 attempts\)/,
    );
    assert.equal(sink.requests.length, 4);
  });

  test('does not retry a 4xx', async (t) => {
    const sink = await startSink(t, () => 401);
    await assert.rejects(
      sendRequest(req(sink.url), { timeoutMs: 2_000 }, { attempts: 4, ...fast }),
      /HTTP 401/,
    );
    assert.equal(sink.requests.length, 1);
  });

  test('a failure names neither the URL nor a token in it', async () => {
    // Nothing listens on port 9 of loopback: connection refused.
    const url = `http://127.0.0.1:9/bot${TOKEN}/sendMessage`;
    const err = await sendRequest(req(url), { timeoutMs: 1_000 }, { attempts: 2, ...fast }).catch(
      (e: Error) => e,
    );
    assert.ok(err instanceof Error);
    assert.match(err.message, /ECONNREFUSED \(after 2 attempts\)/);
    assert.ok(!err.message.includes(TOKEN));
  });
});
