// Each step of a HelmRepository's reconcile (./index.ts) on its own, through its real signature.
// The API server is the in-memory fake of test/simulation/fake-api-server.ts (credential Secrets),
// storage is operators/source/test/fake-artifact-storage.ts, and the chart repository a small HTTP
// server on loopback; the integration test operators/source/test/helm-sources.test.ts keeps the
// real API server and storage. No cluster.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { ConditionType, type HelmRepository, Reason, SOURCE_API_VERSION } from '@mooring/api';
import { FakeClock, KubeClient, type KubeObject, RetryableError, StalledError } from '@mooring/runtime';
import { stepContext } from '@mooring/test/harness/step-context';
import { FakeApiServer, FakeApiTransport } from '../../../../../test/simulation/fake-api-server.ts';
import { FakeArtifactStorage } from '../../../test/fake-artifact-storage.ts';
import type { HelmRepositoryRun } from '../../helm-repository-run.ts';
import { storageRefOf } from '../../source-run.ts';
import { reconcileSource } from '../artifact.ts';
import { HELM_REPOSITORY_STEPS } from './index.ts';
import { readCredentials } from './read-credentials.ts';
import { validateSpec } from './validate-spec.ts';

const NS = 'team';
const TOKEN = 'tok-123';

const INDEX =
  'apiVersion: v1\nentries:\n  tiny:\n    - {name: tiny, version: 1.0.0, urls: [tiny-1.0.0.tgz]}\n';
let body = INDEX;
let requests = 0;
let server: http.Server;
let url: string;

before(async () => {
  server = http.createServer((req, res) => {
    requests++;
    if (req.headers.authorization !== `Bearer ${TOKEN}`) return void res.writeHead(401).end();
    if (req.url !== '/charts/index.yaml') return void res.writeHead(404).end();
    res.writeHead(200).end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/charts`;
});
after(() => new Promise((r) => server.close(r)));

interface Run {
  run: HelmRepositoryRun;
  events: { reason: string; message: string }[];
  condition(type: string): { status: string; reason: string; message: string } | undefined;
}

async function world() {
  const clock = new FakeClock(Date.UTC(2026, 0, 1));
  const apiServer = new FakeApiServer({ now: () => clock.now() });
  const client = new KubeClient(new FakeApiTransport(apiServer), {
    qps: 1e9,
    burst: 1e9,
    userAgent: 'mooring-test',
  });
  const storage = new FakeArtifactStorage();
  const put = (obj: KubeObject) => client.apply(obj, { fieldManager: 'kubectl', force: true });
  await put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  const secret = (name: string, data: Record<string, string>) =>
    put({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name, namespace: NS },
      data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
    } as KubeObject);
  const runOf = async (
    spec: Partial<HelmRepository['spec']> = {},
    initial: HelmRepository['status'] = {},
  ): Promise<Run> => {
    const obj: HelmRepository = {
      apiVersion: SOURCE_API_VERSION,
      kind: 'HelmRepository',
      metadata: { name: 'charts', namespace: NS },
      spec: { url, interval: '10m', secretRef: { name: 'token' }, ...spec },
    };
    const status: NonNullable<HelmRepository['status']> = structuredClone(initial);
    const { ctx, events } = stepContext(status, () => clock.now());
    const run: HelmRepositoryRun = {
      obj,
      ctx,
      deps: { client, storage: storage.asStorage, maxIndexBytes: 1 << 20 },
      status,
      storage: storage.asStorage,
      storageRef: storageRefOf('HelmRepository', obj),
      timeoutMs: 10_000,
    };
    const condition = (type: string) => status.conditions?.find((c) => c.type === type);
    return { run, events, condition };
  };
  await secret('token', { bearerToken: TOKEN });
  return { storage, secret, runOf };
}

test('validate spec: credentials in the URL, a non-http(s) URL, an OCI provider stall before any request', async () => {
  const w = await world();
  for (const [spec, reason, message] of [
    [{ url: 'https://u:p@charts.example' }, Reason.URLInvalid, /must not carry credentials/],
    [{ url: 'ftp://charts.example' }, Reason.URLInvalid, /not an http\(s\) URL; for OCI set type: oci/],
    [
      { type: 'oci', url: 'oci://r.example/c', provider: 'aws' },
      Reason.InvalidProviderConfiguration,
      /'aws'/,
    ],
  ] as const) {
    const { run } = await w.runOf(spec as Partial<HelmRepository['spec']>);
    assert.throws(
      () => validateSpec(run),
      (err: unknown) => err instanceof StalledError && err.reason === reason && message.test(err.message),
    );
  }
});

test('read credentials: a Secret of the wrong shape stalls, naming it', async () => {
  const w = await world();
  await w.secret('half', { username: 'bot' });
  await w.secret('nothing', { other: 'x' });
  await w.secret('tls-empty', { 'tls.key': 'k' });
  for (const [spec, message] of [
    [{ secretRef: { name: 'half' } }, `Secret ${NS}/half must hold both 'username' and 'password'`],
    [
      { secretRef: { name: 'nothing' } },
      `Secret ${NS}/nothing has neither 'username' and 'password' nor 'bearerToken'`,
    ],
    [{ certSecretRef: { name: 'tls-empty' } }, `Secret ${NS}/tls-empty has neither 'ca.crt' nor 'tls.crt'`],
  ] as const) {
    const { run } = await w.runOf(spec);
    validateSpec(run);
    await assert.rejects(
      readCredentials(run),
      (err: unknown) => err instanceof StalledError && err.message === message,
    );
  }
  const ok = await w.runOf();
  await readCredentials(ok.run);
  assert.deepEqual(ok.run.credentials, { auth: { bearerToken: TOKEN }, secret: `${NS}/token` });
});

test('type oci: Ready with no artifact, nothing fetched or stored, an old artifact dropped', async () => {
  const w = await world();
  const old = w.storage.seed({ kind: 'HelmRepository', namespace: NS, name: 'charts' });
  const before = requests;
  const { run, condition } = await w.runOf(
    { type: 'oci', url: 'oci://registry.example/charts', secretRef: undefined },
    { artifact: { ...old, revision: 'sha256:1' }, url: old.url },
  );
  const result = await reconcileSource(HELM_REPOSITORY_STEPS, run);
  assert.deepEqual(result, { message: 'Helm repository is ready' });
  assert.equal(run.status.artifact, undefined);
  assert.equal(run.status.url, undefined);
  assert.equal(condition(ConditionType.ArtifactInStorage), undefined);
  assert.equal(requests, before);
  assert.equal(w.storage.gcCalls.length, 0);
});

test('fetch, pack, record: the index is stored once; the same index again keeps the artifact', async () => {
  const w = await world();
  body = INDEX;
  const first = await w.runOf();
  const result = await reconcileSource(HELM_REPOSITORY_STEPS, first.run);
  const artifact = first.run.status.artifact!;
  assert.match(artifact.revision, /^sha256:[0-9a-f]{64}$/);
  assert.equal(result.revision, artifact.revision);
  assert.deepEqual(w.storage.files.get(artifact.path)?.files, ['index.yaml']);
  assert.equal(first.run.status.url, artifact.url);
  assert.deepEqual(
    first.events.map((e) => e.reason),
    ['NewArtifact'],
  );
  assert.match(first.events[0]!.message, /stored fetched index of 1 chart with revision/);

  // Same entries, written another way: the same normalised index, so nothing new is stored.
  body = 'apiVersion: v1\nentries: {tiny: [{version: 1.0.0, name: tiny, urls: [tiny-1.0.0.tgz]}]}\n';
  const again = await w.runOf({}, structuredClone(first.run.status));
  await reconcileSource(HELM_REPOSITORY_STEPS, again.run);
  assert.equal(again.run.upToDate, true);
  assert.equal(again.run.status.artifact?.path, artifact.path);
  assert.equal(w.storage.files.size, 1);
  assert.deepEqual(again.events, []);
  body = INDEX;
});

test('fetch index: a 401 names the Secret; a YAML bomb is an invalid index; both FetchFailed and retried', async () => {
  const w = await world();
  await w.secret('stale', { bearerToken: 'old' });
  const denied = await w.runOf({ secretRef: { name: 'stale' } });
  await assert.rejects(
    reconcileSource(HELM_REPOSITORY_STEPS, denied.run),
    (err: unknown) =>
      err instanceof RetryableError &&
      err.reason === Reason.AuthenticationFailed &&
      err.message.endsWith(`401 Unauthorized; check the credentials in Secret ${NS}/stale`),
  );
  assert.equal(denied.condition(ConditionType.FetchFailed)?.reason, Reason.AuthenticationFailed);

  body = [
    'apiVersion: v1',
    'a: &a [x, x, x, x, x, x, x, x, x, x]',
    ...'bcdefg'.split('').map((l, i) => `${l}: &${l} [${Array(10).fill(`*${'abcdefg'[i]}`).join(', ')}]`),
    'entries: {}',
  ].join('\n');
  const bomb = await w.runOf();
  await assert.rejects(
    reconcileSource(HELM_REPOSITORY_STEPS, bomb.run),
    (err: unknown) =>
      err instanceof RetryableError &&
      err.reason === Reason.IndexationFailed &&
      /invalid index: index.yaml expands too many YAML aliases/.test(err.message),
  );
  assert.equal(bomb.run.status.artifact, undefined);
  body = INDEX;
});
