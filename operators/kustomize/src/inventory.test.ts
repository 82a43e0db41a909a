import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fromEntry, inventoryId, inventoryOf, staleEntries } from './inventory.ts';

test('inventory ids follow Flux: namespace_name_group_kind with empty parts for core and cluster scope', () => {
  assert.equal(
    inventoryId({ apiVersion: 'v1', kind: 'Namespace', namespace: '', name: 'apps' }),
    '_apps__Namespace',
  );
  assert.equal(
    inventoryId({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'podinfo', name: 'podinfo' }),
    'podinfo_podinfo_apps_Deployment',
  );
  const ref = { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', namespace: 'web', name: 'front' };
  assert.deepEqual(fromEntry(inventoryOf([ref]).entries[0]!), ref);
  assert.deepEqual(fromEntry({ id: 'a_cm__ConfigMap', v: 'v1' }), {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    namespace: 'a',
    name: 'cm',
  });
});

test('stale entries are those gone from the new set; a version bump is not a removal', () => {
  const before = inventoryOf([
    { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'a', name: 'kept' },
    { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'a', name: 'gone' },
    { apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', namespace: 'a', name: 'hpa' },
  ]);
  const after = inventoryOf([
    { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'a', name: 'kept' },
    { apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', namespace: 'a', name: 'hpa' },
  ]);
  assert.deepEqual(staleEntries(before, after), [
    { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'a', name: 'gone' },
  ]);
  assert.deepEqual(staleEntries(undefined, after), []);
  assert.deepEqual(
    inventoryOf([...after.entries.map(fromEntry)].reverse()),
    after,
    'sorted, so order does not matter',
  );
});
