import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { addNamePrefixSuffix } from './name-prefix-suffix.ts';
import { setReplicas } from './replicas.ts';
import { resourcesFrom } from './test-resources.ts';

describe('setReplicas', () => {
  const cases: { name: string; input: string; want: unknown }[] = [
    {
      name: 'overrides an existing count',
      input: 'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {replicas: 1}',
      want: 5,
    },
    {
      name: 'creates a missing count',
      input: 'apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: web}\nspec: {}',
      want: 5,
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const resources = resourcesFrom(c.input);
      setReplicas(resources, [{ name: 'web', count: 5 }]);
      assert.equal((resources[0]!.object.spec as { replicas: number }).replicas, c.want);
    });
  }

  it('matches a resource by a name it had before a prefix', () => {
    const resources = resourcesFrom('apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {}');
    addNamePrefixSuffix(resources, 'prod-');
    setReplicas(resources, [{ name: 'web', count: 2 }]);
    assert.equal((resources[0]!.object.spec as { replicas: number }).replicas, 2);
  });

  it('fails when no workload has the name', () => {
    const resources = resourcesFrom('apiVersion: v1\nkind: Service\nmetadata: {name: web}');
    assert.throws(
      () => setReplicas(resources, [{ name: 'web', count: 2 }]),
      /resource with name web does not match/,
    );
  });
});
