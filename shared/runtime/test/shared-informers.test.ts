import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { eventually, testCluster, testNamespace } from '@mooring/test/harness';
import type { KubeClient, KubeObject } from '../src/index.ts';
import { SharedInformers } from '../src/shared-informers.ts';

let client: KubeClient;
before(async () => {
  client = (await testCluster()).client;
});

const configMap = (namespace: string, name: string, labels: Record<string, string> = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace, labels },
});
const names = (objects: KubeObject[]) => objects.map((o) => o.metadata.name).sort();

test('controllers asking for the same kind share one cache and one watch, which stops when the last lets go', async (t) => {
  const ns = await testNamespace(t, 'shared-informers');
  await client.create(configMap(ns, 'a', { shard: 'one' }));
  await client.create(configMap(ns, 'b'));
  const informers = new SharedInformers(client);
  const first = informers.lease({ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns });
  const second = informers.lease({ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns });
  const sharded = informers.lease({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    namespace: ns,
    labelSelector: 'shard=one',
  });
  t.after(() => Promise.all([first.stop(), second.stop(), sharded.stop()]));

  assert.equal(first.informer, second.informer, 'equal options, one informer');
  assert.notEqual(first.informer, sharded.informer, 'another selector, another informer');
  assert.equal(informers.size, 2);
  await Promise.all([first.start(), second.start(), sharded.start()]);
  assert.deepEqual(names(first.informer.list()), ['a', 'b']);
  assert.deepEqual(names(sharded.informer.list()), ['a']);
  assert.ok(
    first.informer.list().every((o) => o.metadata.managedFields === undefined && o.metadata.uid),
    'the cache keeps objects without their managedFields',
  );
  assert.equal(first.informer.stats.lists, 1, 'one list for both holders');
  assert.equal(first.informer.stats.watches, 1, 'one watch for both holders');

  // One holder letting go (twice, harmlessly) leaves the other's cache current.
  await first.stop();
  await first.stop();
  await client.create(configMap(ns, 'c'));
  await eventually('the remaining holder to see the new object', async () =>
    second.informer.get(`${ns}/c`) ? true : undefined,
  );

  // The last holder letting go stops the watch: the cache hears of nothing new.
  await second.stop();
  await client.create(configMap(ns, 'd'));
  await eventually('the sharded informer, still held, to see its own objects only', async () =>
    sharded.informer.get(`${ns}/a`) && !sharded.informer.get(`${ns}/d`) ? true : undefined,
  );
  await sleep(1_000);
  assert.equal(second.informer.get(`${ns}/d`), undefined, 'a stopped informer heard of a new object');
});
