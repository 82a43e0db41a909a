import assert from 'node:assert/strict';
import { request } from 'node:http';
import { test } from 'node:test';
import { KUSTOMIZE_API_VERSION, SOURCE_API_VERSION } from '@mooring/api';
import { eventually, testCluster, testNamespace } from '@mooring/test/harness';
import type { RowPage } from '../src/ui/object-index.ts';
import { startUiServer } from '../src/ui/ui-server.ts';
import { call } from './ui-http.ts';

test('mooring ui API: token, Host and Origin checked; filtered pages; changes streamed; refusals passed on', async (t) => {
  const ns = await testNamespace(t, 'ui-api');
  const { client } = await testCluster();
  const kustomization = (name: string, labels?: Record<string, string>) => ({
    apiVersion: KUSTOMIZE_API_VERSION,
    kind: 'Kustomization',
    metadata: { name, namespace: ns, labels },
    spec: { sourceRef: { kind: 'GitRepository', name: 'platform' }, path: './', interval: '1h', prune: true },
  });
  for (let i = 0; i < 120; i++)
    await client.create(
      kustomization(`app-${String(i).padStart(3, '0')}`, i % 12 === 0 ? { team: 'ml' } : undefined),
    );
  await client.create({
    apiVersion: SOURCE_API_VERSION,
    kind: 'GitRepository',
    metadata: { name: 'platform', namespace: ns },
    spec: { url: 'https://example.invalid/platform.git', interval: '1h', ref: { branch: 'main' } },
  });

  const ui = await startUiServer({ client, namespace: ns, port: 0, token: 'test-token-abc' });
  t.after(() => ui.close());
  const { port } = ui;
  const host = { host: `127.0.0.1:${port}` };
  const auth = { ...host, cookie: 'mooring_ui_token=test-token-abc' };

  // Who may use it: the printed URL's token, only under this server's own name, writes only from its page.
  assert.equal((await call(port, '/api/objects', { headers: host })).status, 403);
  assert.equal((await call(port, '/?token=wrong', { headers: host })).status, 403);
  const rebinding = await call(port, '/api/objects?token=test-token-abc', {
    headers: { host: `evil.example:${port}` },
  });
  assert.equal(rebinding.status, 403);
  assert.match(rebinding.body, /Host "evil\.example:\d+" is not this server/);
  const page = await call(port, '/?token=test-token-abc', { headers: host });
  assert.equal(page.status, 200);
  assert.match(page.body, /<main id="main"/);
  const script = await call(port, '/main.js', { headers: auth });
  assert.equal(script.status, 200);
  assert.ok(script.body.length > 1000, 'the bundled page script is served from memory');
  const action = JSON.stringify({ action: 'suspend', kind: 'Kustomization', namespace: ns, name: 'app-000' });
  const crossOrigin = await call(port, '/api/action', {
    method: 'POST',
    headers: { ...auth, origin: 'https://attacker.example', 'content-type': 'application/json' },
    body: action,
  });
  assert.equal(crossOrigin.status, 403);
  const noOrigin = await call(port, '/api/action', {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: action,
  });
  assert.equal(noOrigin.status, 403);
  const sameOrigin = { ...auth, origin: `http://127.0.0.1:${port}`, 'content-type': 'application/json' };
  const stillRunning = (await client.get({ ...kustomization('app-000'), name: 'app-000', namespace: ns }))
    .spec as {
    suspend?: boolean;
  };
  assert.equal(stillRunning.suspend, undefined, 'a refused request changed nothing');

  // Pages: never reconciled (no operator here), so all progressing; sorted; the counts cover the whole set.
  const first = JSON.parse(
    (await call(port, '/api/objects?kind=Kustomization&limit=50', { headers: auth })).body,
  ) as RowPage;
  assert.equal(first.total, 120);
  assert.equal(first.rows.length, 50);
  assert.equal(first.rows[0]!.name, 'app-000');
  assert.equal(first.counts.state.progressing, 120);
  const third = JSON.parse(
    (await call(port, '/api/objects?kind=Kustomization&limit=50&offset=100', { headers: auth })).body,
  ) as RowPage;
  assert.deepEqual(
    third.rows.map((r) => r.name),
    Array.from({ length: 20 }, (_, i) => `app-${100 + i}`),
  );
  const searched = JSON.parse(
    (await call(port, '/api/objects?search=app-11', { headers: auth })).body,
  ) as RowPage;
  assert.deepEqual(
    searched.rows.map((r) => r.name),
    Array.from({ length: 10 }, (_, i) => `app-${110 + i}`),
  );

  const labelled = (selector: string) =>
    call(port, `/api/objects?kind=Kustomization&label=${encodeURIComponent(selector)}`, {
      headers: auth,
    }).then((r) => (JSON.parse(r.body) as RowPage).total);
  assert.equal(await labelled('team=ml'), 10);
  assert.equal(await labelled('team!=ml'), 110);
  assert.equal(await labelled('team'), 10);

  // A change on the API server reaches an open event stream, through the watch.
  const events: string[] = [];
  const stream = request({ host: '127.0.0.1', port, path: '/api/changes', headers: auth }, (res) => {
    res.setEncoding('utf8');
    res.on('data', (c: string) => events.push(c));
  });
  stream.end();
  t.after(() => stream.destroy());
  await eventually('the stream to open', async () => events.some((e) => e.startsWith('retry:')));

  // An action as the user: suspend from the page's origin; the row turns suspended in the stream.
  const suspended = await call(port, '/api/action', { method: 'POST', headers: sameOrigin, body: action });
  assert.equal(suspended.status, 200, suspended.body);
  await eventually('the suspended row in the stream', async () =>
    events
      .join('')
      .includes(
        `"key":"Kustomization/${ns}/app-000","row":{"kind":"Kustomization","namespace":"${ns}","name":"app-000","state":"suspended"`,
      ),
  );
  const onServer = (await client.get({ ...kustomization('app-000'), name: 'app-000', namespace: ns }))
    .spec as {
    suspend?: boolean;
  };
  assert.equal(onServer.suspend, true);

  // A refusal shows the API server's own answer.
  const refused = await call(port, '/api/action', {
    method: 'POST',
    headers: sameOrigin,
    body: JSON.stringify({ action: 'reconcile', kind: 'Kustomization', namespace: ns, name: 'nope' }),
  });
  assert.equal(refused.status, 404);
  assert.match(JSON.parse(refused.body).message, /kustomizations\.kustomize\.mooring\.dev "nope" not found/);

  // The object page: the why sentence names the source that is not Ready.
  const detail = JSON.parse(
    (await call(port, `/api/object/Kustomization/${ns}/app-001`, { headers: auth })).body,
  ) as { why?: { sentence: string } };
  assert.match(
    detail.why?.sentence ?? '',
    new RegExp(`waits for its source GitRepository ${ns}/platform, which failed: .*not been reconciled yet`),
  );
});
