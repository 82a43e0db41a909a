// Issue #7, end to end: a commit pushed to the Git test server, a GitHub-signed push webhook to the
// Receiver, the GitRepository fetching the commit, the Kustomization applying it, and a
// generic-hmac Provider receiving the alert, with the source, kustomize and notification operators
// in this process against the real API server.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { KUSTOMIZE_API_VERSION, NOTIFICATION_API_VERSION, SOURCE_API_VERSION } from '@mooring/api';
import type { KubeObject } from '@mooring/runtime';
import { eventually, GitServer, testCluster, testNamespace } from '@mooring/test/harness';
import { type Recorded, startSink } from './http-sink.ts';
import { flowObjects, manifests, sign, startFlowOperators } from './push-flow-fixture.ts';

const HOOK_TOKEN = 'e2e-hook-token-7c1d';
const PROVIDER_TOKEN = 'e2e-provider-token-42ab';

interface AlertBody {
  involvedObject: { kind: string; namespace: string; name: string };
  severity: string;
  message: string;
  reason: string;
  metadata: Record<string, string>;
  reportingController: string;
}

test('push → signed GitHub webhook → fetch → apply → signed generic-hmac alert', async (t) => {
  const { client } = await testCluster();
  const ns = await testNamespace(t, 'push-to-applied');
  const sink = await startSink(t);
  const git = await GitServer.start();
  t.after(() => git.close());
  const storage = await mkdtemp(join(tmpdir(), 'mooring-e2e-'));
  t.after(() => rm(storage, { recursive: true, force: true }));
  const { operators, receiverPort } = await startFlowOperators(ns, storage);
  // Hooks run in the order registered (the namespace's delete is already queued, which only marks
  // it Terminating): the Mooring objects go while the operators still run to release their
  // finalizers, then the operators stop.
  t.after(async () => {
    for (const [apiVersion, kind] of [
      [KUSTOMIZE_API_VERSION, 'Kustomization'],
      [SOURCE_API_VERSION, 'GitRepository'],
    ] as const) {
      const key = { apiVersion, kind, namespace: ns, name: 'app' };
      await client.delete(key).catch(() => {});
      await eventually(`${kind} deleted`, async () => !(await client.getOrUndefined(key)), 20_000).catch(
        () => {},
      );
    }
    await operators.stop();
  });
  const repo = await git.createRepo('app');
  const first = await repo.commit(manifests(ns, '1.0.0'), 'version 1.0.0');
  const objects = flowObjects(ns, {
    repoUrl: repo.url,
    alertUrl: `${sink.url}/mooring`,
    hookToken: HOOK_TOKEN,
    providerToken: PROVIDER_TOKEN,
  });
  // The Alert and Provider first, so the first apply's events already have somewhere to go.
  for (const o of objects.slice(0, 4)) await client.create(o);
  for (const kind of ['Provider', 'Alert']) {
    await eventually(
      `${kind} Ready`,
      async () => {
        const o = await client.get<
          KubeObject & { status?: { conditions?: { type: string; status: string }[] } }
        >({
          apiVersion: NOTIFICATION_API_VERSION,
          kind,
          namespace: ns,
          name: kind === 'Alert' ? 'applied' : 'ops-hook',
        });
        return o.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
      },
      20_000,
    );
  }
  const started = performance.now();
  for (const o of objects.slice(4)) await client.create(o);

  type Ks = KubeObject & { status?: { lastAppliedRevision?: string } };
  const ksKey = { apiVersion: KUSTOMIZE_API_VERSION, kind: 'Kustomization', namespace: ns, name: 'app' };
  const applied = (commit: string) =>
    eventually(
      `Kustomization applied main@sha1:${commit}`,
      async () => (await client.get<Ks>(ksKey)).status?.lastAppliedRevision === `main@sha1:${commit}`,
      30_000,
    );
  const configVersion = async () =>
    (
      await client.getOrUndefined<KubeObject & { data?: Record<string, string> }>({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        namespace: ns,
        name: 'app-config',
      })
    )?.data?.version;
  const alertsFor = (commit: string) =>
    sink.requests
      .map((r) => ({ r, body: JSON.parse(r.body) as AlertBody }))
      .filter(({ body }) => body.metadata?.revision === `main@sha1:${commit}`);
  const checkSigned = (r: Recorded) => {
    assert.equal(r.method, 'POST');
    assert.equal(r.url, '/mooring');
    assert.equal(
      r.headers['x-signature'],
      sign(PROVIDER_TOKEN, r.body),
      'X-Signature is the HMAC of the body',
    );
  };

  // The first sync, driven by the objects' creation: the Ready transition is announced as
  // "Applied revision: …" with reason ReconciliationSucceeded.
  await applied(first);
  t.diagnostic(`first sync ${Math.round(performance.now() - started)} ms after the objects`);
  assert.equal(await configVersion(), '1.0.0');
  const firstReady = await eventually(
    'the first "Applied revision" alert',
    async () => alertsFor(first).find(({ body }) => body.reason === 'ReconciliationSucceeded'),
    10_000,
  );
  checkSigned(firstReady.r);
  assert.equal(firstReady.body.involvedObject.kind, 'Kustomization');
  assert.equal(firstReady.body.involvedObject.name, 'app');
  assert.equal(firstReady.body.message, `Applied revision: main@sha1:${first}`);

  const webhookPath = await eventually(
    'the Receiver webhook path',
    async () =>
      (
        await client.get<KubeObject & { status?: { webhookPath?: string } }>({
          apiVersion: NOTIFICATION_API_VERSION,
          kind: 'Receiver',
          namespace: ns,
          name: 'github',
        })
      ).status?.webhookPath,
    20_000,
  );
  const hook = (body: string, signature: string) =>
    fetch(`http://127.0.0.1:${receiverPort}${webhookPath}`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        'X-GitHub-Event': 'push',
        'X-Hub-Signature-256': signature,
      },
      body,
    });

  const second = await repo.commit(manifests(ns, '2.0.0'), 'version 2.0.0');
  const body = JSON.stringify({
    ref: 'refs/heads/main',
    before: first,
    after: second,
    repository: { full_name: 'acme/app', clone_url: repo.url },
  });

  // A forged webhook triggers nothing: with a 10 m interval, nothing else would fetch the commit.
  const forged = await hook(body, sign('not-the-token', body));
  assert.equal(forged.status, 401);
  await forged.arrayBuffer();
  await new Promise((r) => setTimeout(r, 1500));
  assert.equal((await client.get<Ks>(ksKey)).status?.lastAppliedRevision, `main@sha1:${first}`);
  assert.equal(await configVersion(), '1.0.0');
  assert.equal(alertsFor(second).length, 0, 'no alert after a webhook with a wrong signature');

  const sent = performance.now();
  const signed = await hook(body, sign(HOOK_TOKEN, body));
  assert.equal(signed.status, 200);
  await signed.arrayBuffer();
  await applied(second);
  t.diagnostic(`applied ${Math.round(performance.now() - sent)} ms after the signed webhook`);
  assert.equal(await configVersion(), '2.0.0');
  // Two alerts come for this revision, in either order: the change set and "Applied revision".
  const alert = await eventually(
    'the change-set alert for the pushed revision',
    async () => alertsFor(second).find((a) => /configured/.test(a.body.message)),
    10_000,
  );
  checkSigned(alert.r);
  // In one process the operators share one event recorder, named after all of them.
  assert.equal(alert.r.headers['gotk-component'], alert.body.reportingController);
  assert.equal(alert.body.involvedObject.kind, 'Kustomization');
  assert.equal(alert.body.involvedObject.namespace, ns);
  assert.equal(alert.body.involvedObject.name, 'app');
  assert.equal(alert.body.severity, 'info');
  assert.equal(alert.body.metadata.revision, `main@sha1:${second}`);
  assert.match(alert.body.message, new RegExp(`ConfigMap/${ns}/app-config configured`));
  // And the "applied revision" alert the issue asks for, for this new revision too.
  const appliedAlert = await eventually(
    'the applied-revision alert',
    async () => alertsFor(second).find((a) => a.body.message === `Applied revision: main@sha1:${second}`),
    10_000,
  );
  checkSigned(appliedAlert.r);
  assert.equal(appliedAlert.body.reason, 'ReconciliationSucceeded');
});
