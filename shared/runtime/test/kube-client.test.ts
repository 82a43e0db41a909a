import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { eventually, testCluster, testNamespace } from '@mooring/test/harness';
import { ApiError, type KubeClient, type KubeObject } from '../src/index.ts';
import { installToyCrd, type Toy, toy } from './toy.ts';

type ConfigMap = KubeObject & { data?: Record<string, string> };
const configMap = (namespace: string, name: string, data: Record<string, string> = {}): ConfigMap => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace },
  data,
});

let client: KubeClient;
before(async () => {
  client = (await testCluster()).client;
  await installToyCrd(client);
});

describe('KubeClient against the real API server', () => {
  test('lists every page when the server paginates', async (t) => {
    const ns = await testNamespace(t, 'paging');
    for (let i = 0; i < 7; i++) await client.create(configMap(ns, `cm-${i}`));
    const list = await client.list<ConfigMap>('v1', 'ConfigMap', { namespace: ns, limit: 2 });
    const names = list.items.map((c) => c.metadata.name).filter((n) => n?.startsWith('cm-'));
    assert.equal(names.length, 7);
    assert.ok(list.metadata.resourceVersion, 'a list must carry the resourceVersion to watch from');
    assert.ok(list.items.every((c) => c.kind === 'ConfigMap' && c.apiVersion === 'v1'));
  });

  test('a dry-run apply returns the merged object and changes nothing', async (t) => {
    const ns = await testNamespace(t, 'dry-run');
    await client.apply(configMap(ns, 'settings', { a: '1' }), { fieldManager: 'test' });
    const preview = await client.apply(configMap(ns, 'settings', { a: '2' }), {
      fieldManager: 'test',
      dryRun: true,
    });
    assert.equal(preview.data?.a, '2');
    const live = await client.get<ConfigMap>({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      namespace: ns,
      name: 'settings',
    });
    assert.equal(live.data?.a, '1');
  });

  test('a field owned by another manager conflicts unless forced', async (t) => {
    const ns = await testNamespace(t, 'conflict');
    await client.apply(configMap(ns, 'owned', { a: '1' }), { fieldManager: 'someone-else' });
    await assert.rejects(
      client.apply(configMap(ns, 'owned', { a: '2' }), { fieldManager: 'mooring' }),
      (err: unknown) => {
        assert.ok(err instanceof ApiError && err.isConflict);
        assert.match(err.message, /conflict with "someone-else"/);
        return true;
      },
    );
    const forced = await client.apply(configMap(ns, 'owned', { a: '2' }), {
      fieldManager: 'mooring',
      force: true,
    });
    assert.equal(forced.data?.a, '2');
  });

  test('status goes through the status subresource and leaves the spec alone', async (t) => {
    const ns = await testNamespace(t, 'status');
    await client.create(toy(ns, 'st', { message: 'spec stays' }));
    await client.applyStatus(
      {
        apiVersion: 'test.mooring.dev/v1',
        kind: 'Toy',
        metadata: { name: 'st', namespace: ns },
        status: { count: 9 },
      },
      { fieldManager: 'mooring', force: true },
    );
    const live = await client.get<Toy>({
      apiVersion: 'test.mooring.dev/v1',
      kind: 'Toy',
      namespace: ns,
      name: 'st',
    });
    assert.equal(live.status?.count, 9);
    assert.equal(live.spec.message, 'spec stays');
  });

  test('impersonates a user with several groups, and RBAC sees them', async (t) => {
    const ns = await testNamespace(t, 'impersonate');
    await client.create(configMap(ns, 'visible'));
    const key = { apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: 'visible' };
    const as = { user: 'alice', groups: ['team-a', 'readers'] };
    await assert.rejects(client.get(key, as), (err: unknown) => {
      assert.ok(err instanceof ApiError && err.statusCode === 403);
      assert.match(err.message, /User "alice" cannot get resource "configmaps"/);
      return true;
    });
    // Granting the second group is enough, which shows both groups were sent.
    await client.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'read', namespace: ns },
      rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }],
    });
    await client.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'readers', namespace: ns },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'read' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'readers' }],
    });
    // The API server's RBAC authorizer learns of a new binding from its own watch: poll for it.
    const got = await eventually('the binding takes effect', async () => {
      try {
        return await client.get<ConfigMap>(key, as);
      } catch (err) {
        if (err instanceof ApiError && err.statusCode === 403) return undefined;
        throw err;
      }
    });
    assert.equal(got.metadata.name, 'visible');
  });

  test('an unknown kind is reported as such, and found once its CRD exists', async () => {
    await assert.rejects(
      client.list('nope.mooring.dev/v1', 'Nothing'),
      /no kind Nothing is registered for nope\.mooring\.dev\/v1/,
    );
    const toys = await client.list('test.mooring.dev/v1', 'Toy');
    assert.ok(Array.isArray(toys.items));
  });
});
