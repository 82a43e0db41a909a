import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { setNamespace } from './namespace.ts';
import { objectsOf, resourcesFrom } from './test-resources.ts';

describe('setNamespace', () => {
  const cases: { name: string; input: string; want: string; unsetOnly?: boolean }[] = [
    {
      name: 'sets metadata.namespace on namespaced kinds and creates it',
      input:
        'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: old}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}',
      want: '- {apiVersion: v1, kind: ConfigMap, metadata: {name: a, namespace: prod}}\n- {apiVersion: apps/v1, kind: Deployment, metadata: {name: d, namespace: prod}}',
    },
    {
      name: 'leaves cluster-scoped kinds alone and renames a Namespace',
      input:
        'apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: r}\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: other}',
      want: '- {apiVersion: rbac.authorization.k8s.io/v1, kind: ClusterRole, metadata: {name: r}}\n- {apiVersion: v1, kind: Namespace, metadata: {name: prod}}',
    },
    {
      name: 'sets only subjects named default in bindings',
      input:
        'apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: b}\nsubjects:\n- {kind: ServiceAccount, name: default, namespace: x}\n- {kind: ServiceAccount, name: app, namespace: x}\n- {kind: User, name: default}',
      want: '- apiVersion: rbac.authorization.k8s.io/v1\n  kind: ClusterRoleBinding\n  metadata: {name: b}\n  subjects:\n  - {kind: ServiceAccount, name: default, namespace: prod}\n  - {kind: ServiceAccount, name: app, namespace: x}\n  - {kind: User, name: default, namespace: prod}',
    },
    {
      name: 'sets the APIService service namespace and a CRD conversion webhook namespace',
      input:
        'apiVersion: apiregistration.k8s.io/v1\nkind: APIService\nmetadata: {name: v1.x}\nspec: {service: {name: s}}\n---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: a.b}\nspec: {conversion: {webhook: {clientConfig: {service: {name: s, namespace: old}}}}}',
      want: '- {apiVersion: apiregistration.k8s.io/v1, kind: APIService, metadata: {name: v1.x}, spec: {service: {name: s, namespace: prod}}}\n- {apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition, metadata: {name: a.b}, spec: {conversion: {webhook: {clientConfig: {service: {name: s, namespace: prod}}}}}}',
    },
    {
      name: 'unsetOnly keeps existing namespaces',
      unsetOnly: true,
      input:
        'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: old}\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: s}',
      want: '- {apiVersion: v1, kind: ConfigMap, metadata: {name: a, namespace: old}}\n- {apiVersion: v1, kind: Secret, metadata: {name: s, namespace: prod}}',
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const resources = resourcesFrom(c.input);
      setNamespace(resources, 'prod', { unsetOnly: c.unsetOnly ?? false });
      assert.deepEqual(objectsOf(resources), parse(c.want));
    });
  }

  it('records the old identity so references can follow', () => {
    const [cm] = resourcesFrom('apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}');
    setNamespace([cm!], 'prod');
    assert.deepEqual(cm!.previousIds, [
      { group: '', version: 'v1', kind: 'ConfigMap', name: 'a', namespace: '' },
    ]);
  });

  it('refuses two resources that end up with the same identity', () => {
    const resources = resourcesFrom(
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: x}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: y}',
    );
    assert.throws(() => setNamespace(resources, 'prod'), /namespace transformation produces ID conflict/);
  });
});
