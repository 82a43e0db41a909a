// The simulation's in-memory API server (the one fake API server allowed in this repository):
// the server-side apply, watch and finalizer rules the simulation depends on, checked directly.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FakeApiServer, type Obj } from './fake-api-server.ts';

function server(): FakeApiServer {
  const s = new FakeApiServer({ now: () => Date.UTC(2025, 0, 1), watchWindow: 3 });
  call(s, 'PATCH', '/api/v1/namespaces/default?fieldManager=t', {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: 'default' },
  });
  return s;
}

const APPLY = 'application/apply-patch+yaml';
const MERGE = 'application/merge-patch+json';

function call(s: FakeApiServer, method: string, path: string, body?: unknown, type = APPLY) {
  const res = s.handle({
    method,
    path,
    headers: body === undefined ? {} : { 'Content-Type': type },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { code: res.statusCode, obj: JSON.parse(res.body) as Obj & { message?: string } };
}

const cm = (data: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'a', namespace: 'default' },
  data,
});
const CM = '/api/v1/namespaces/default/configmaps/a';

test('server-side apply creates, removes the fields a manager stops applying, keeps others', () => {
  const s = server();
  assert.equal(call(s, 'PATCH', `${CM}?fieldManager=mooring`, cm({ x: '1', y: '2' })).code, 201);
  assert.equal(call(s, 'PATCH', `${CM}?fieldManager=kubectl-edit`, { data: { z: '3' } }, MERGE).code, 200);
  const r = call(s, 'PATCH', `${CM}?fieldManager=mooring`, cm({ x: '1' }));
  assert.equal(r.code, 200);
  assert.deepEqual(r.obj.data, { x: '1', z: '3' });
});

test('an unchanged apply keeps the resourceVersion; a dry run stores nothing', () => {
  const s = server();
  const first = call(s, 'PATCH', `${CM}?fieldManager=mooring`, cm({ x: '1' })).obj;
  const again = call(s, 'PATCH', `${CM}?fieldManager=mooring`, cm({ x: '1' })).obj;
  assert.equal(again.metadata.resourceVersion, first.metadata.resourceVersion);
  const dry = call(s, 'PATCH', `${CM}?fieldManager=mooring&dryRun=All`, cm({ x: '2' }));
  assert.deepEqual(dry.obj.data, { x: '2' });
  assert.deepEqual(call(s, 'GET', CM).obj.data, { x: '1' });
});

test('apply conflicts without force, takes the field with force', () => {
  const s = server();
  call(s, 'PATCH', `${CM}?fieldManager=a`, cm({ x: '1' }));
  assert.equal(call(s, 'PATCH', `${CM}?fieldManager=b`, cm({ x: '2' })).code, 409);
  assert.equal(call(s, 'PATCH', `${CM}?fieldManager=b&force=true`, cm({ x: '2' })).code, 200);
});

test('a merge patch with a stale resourceVersion is a 409; a Service port above 65535 is a 422', () => {
  const s = server();
  call(s, 'PATCH', `${CM}?fieldManager=a`, cm({ x: '1' }));
  assert.equal(
    call(s, 'PATCH', CM, { metadata: { resourceVersion: '1' }, data: { x: '2' } }, MERGE).code,
    409,
  );
  const svc = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 's', namespace: 'default' },
    spec: { ports: [{ port: 70000 }] },
  };
  const r = call(s, 'PATCH', '/api/v1/namespaces/default/services/s?fieldManager=a&dryRun=All', svc);
  assert.equal(r.code, 422);
  assert.match(r.obj.message ?? '', /must be between 1 and 65535/);
});

test('delete waits for finalizers; the status subresource writes only status', () => {
  const s = server();
  const path = '/apis/kustomize.mooring.dev/v1/namespaces/default/kustomizations/k';
  const k = {
    apiVersion: 'kustomize.mooring.dev/v1',
    kind: 'Kustomization',
    metadata: { name: 'k', namespace: 'default' },
    spec: { sourceRef: { kind: 'GitRepository', name: 'r' }, interval: '1m', prune: true },
    status: { ignored: true },
  };
  assert.equal(call(s, 'PATCH', `${path}?fieldManager=user`, k).obj.status, undefined);
  const st = call(s, 'PATCH', `${path}/status?fieldManager=mooring&force=true`, {
    ...k,
    spec: { prune: false },
    status: { a: 1 },
  });
  assert.deepEqual(st.obj.status, { a: 1 });
  assert.equal((st.obj.spec as { prune: boolean }).prune, true);
  const rv = st.obj.metadata.resourceVersion;
  call(s, 'PATCH', path, { metadata: { finalizers: ['f'], resourceVersion: rv } }, MERGE);
  const deleting = call(s, 'DELETE', path).obj;
  assert.ok(deleting.metadata.deletionTimestamp);
  assert.equal(call(s, 'GET', path).code, 200);
  call(s, 'PATCH', path, { metadata: { finalizers: null } }, MERGE);
  assert.equal(call(s, 'GET', path).code, 404);
});

test('a watch replays from its resourceVersion, and answers 410 Gone past its window', () => {
  const s = server();
  const start = s.resourceVersion;
  for (let i = 0; i < 2; i++) call(s, 'PATCH', `${CM}?fieldManager=a`, cm({ x: String(i) }));
  const seen: string[] = [];
  const w = s.watch(`/api/v1/configmaps?watch=1&resourceVersion=${start}`, (type) => seen.push(type));
  assert.ok('cancel' in w);
  assert.deepEqual(seen, ['ADDED', 'MODIFIED']);
  call(s, 'DELETE', CM);
  assert.deepEqual(seen, ['ADDED', 'MODIFIED', 'DELETED']);
  w.cancel();
  for (let i = 0; i < 4; i++) call(s, 'PATCH', `${CM}?fieldManager=a`, cm({ x: String(i) }));
  const gone = s.watch(`/api/v1/configmaps?watch=1&resourceVersion=${start}`, () => {});
  assert.ok('error' in gone && gone.error.statusCode === 410);
});
