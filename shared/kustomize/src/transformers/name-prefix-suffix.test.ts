import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { addNamePrefixSuffix, nameAffixes } from './name-prefix-suffix.ts';
import { resourcesFrom } from './test-resources.ts';

describe('addNamePrefixSuffix', () => {
  const cases: { kind: string; apiVersion: string; want: string }[] = [
    { kind: 'ConfigMap', apiVersion: 'v1', want: 'p-x-s' },
    { kind: 'ClusterRole', apiVersion: 'rbac.authorization.k8s.io/v1', want: 'p-x-s' },
    { kind: 'CustomResourceDefinition', apiVersion: 'apiextensions.k8s.io/v1', want: 'x' },
    { kind: 'APIService', apiVersion: 'apiregistration.k8s.io/v1', want: 'x' },
    { kind: 'Namespace', apiVersion: 'v1', want: 'x' },
  ];
  for (const c of cases) {
    it(`${c.kind} becomes ${c.want}`, () => {
      const resources = resourcesFrom(`apiVersion: ${c.apiVersion}\nkind: ${c.kind}\nmetadata: {name: x}`);
      addNamePrefixSuffix(resources, 'p-', '-s');
      assert.equal((resources[0]!.object.metadata as { name: string }).name, c.want);
    });
  }

  it('records each rename as a previous id, oldest first', () => {
    const [cm] = resourcesFrom('apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}');
    addNamePrefixSuffix([cm!], 'p-', '-s');
    assert.deepEqual(
      cm!.previousIds.map((id) => id.name),
      ['x', 'p-x'],
    );
    assert.deepEqual(nameAffixes(cm!), { prefixes: ['p-'], suffixes: ['-s'] });
  });

  it('records nothing for an empty prefix', () => {
    const [cm] = resourcesFrom('apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}');
    addNamePrefixSuffix([cm!], '', undefined);
    assert.deepEqual(cm!.previousIds, []);
    assert.equal((cm!.object.metadata as { name: string }).name, 'x');
  });
});
