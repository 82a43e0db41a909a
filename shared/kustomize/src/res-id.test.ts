import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { effectiveNamespace, formatId, idOf, isClusterScoped, sameId } from './res-id.ts';

describe('isClusterScoped', () => {
  const cases: [string, string, string, boolean][] = [
    ['', 'v1', 'Namespace', true],
    ['', 'v1', 'PersistentVolume', true],
    ['', 'v1', 'ConfigMap', false],
    ['rbac.authorization.k8s.io', 'v1', 'ClusterRole', true],
    ['rbac.authorization.k8s.io', 'v1', 'Role', false],
    ['apiextensions.k8s.io', 'v1', 'CustomResourceDefinition', true],
    ['admissionregistration.k8s.io', 'v1', 'ValidatingWebhookConfiguration', true],
    ['storage.k8s.io', 'v1', 'StorageClass', true],
    ['scheduling.k8s.io', 'v1', 'PriorityClass', true],
    ['apiregistration.k8s.io', 'v1', 'APIService', true],
    // kustomize only knows apiVersion+kind pairs from its embedded schema.
    ['example.com', 'v1', 'ClusterRole', false],
    ['', 'v2', 'Namespace', false],
    // kyaml answers from its precomputed table: NodeProxyOptions is in it, TokenReview is not.
    ['', 'v1', 'NodeProxyOptions', true],
    ['authentication.k8s.io', 'v1', 'TokenReview', false],
  ];
  for (const [group, version, kind, want] of cases) {
    it(`${group || 'core'}/${version} ${kind} → ${want}`, () =>
      assert.equal(isClusterScoped(group, version, kind), want));
  }
});

describe('resource ids', () => {
  it('treats an empty namespace as default and ignores the namespace of a cluster-scoped kind', () => {
    const deployment = idOf({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' } });
    assert.deepEqual(deployment, {
      group: 'apps',
      version: 'v1',
      kind: 'Deployment',
      name: 'web',
      namespace: '',
    });
    assert.equal(effectiveNamespace(deployment), 'default');
    assert.ok(sameId(deployment, { ...deployment, namespace: 'default' }));
    assert.ok(!sameId(deployment, { ...deployment, namespace: 'prod' }));
    const ns = idOf({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'prod', namespace: 'x' } });
    assert.ok(sameId(ns, { ...ns, namespace: '' }));
  });

  it('prints ids as kustomize does in messages', () => {
    assert.equal(
      formatId(idOf({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } })),
      'ConfigMap.v1.[noGrp]/c.[noNs]',
    );
  });
});
