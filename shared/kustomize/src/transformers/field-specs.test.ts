import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { JsonObject } from '../resource.ts';
import { type FieldSpec, splitFieldPath, walkFieldSpec } from './field-specs.ts';

describe('splitFieldPath', () => {
  const cases: [string, string[]][] = [
    ['metadata/name', ['metadata', 'name']],
    ['spec/containers[]/image', ['spec', 'containers[]', 'image']],
    [
      'metadata/annotations/nginx.ingress.kubernetes.io\\/auth-secret',
      ['metadata', 'annotations', 'nginx.ingress.kubernetes.io/auth-secret'],
    ],
  ];
  for (const [path, want] of cases) it(path, () => assert.deepEqual(splitFieldPath(path), want));
});

describe('walkFieldSpec', () => {
  const cases: {
    name: string;
    object: JsonObject;
    spec: FieldSpec;
    create?: 'map' | 'scalar';
    want: JsonObject;
  }[] = [
    {
      name: 'descends into every list element without a [] hint',
      object: {
        kind: 'Pod',
        spec: { containers: [{ env: [{ name: 'a' }, { name: 'b' }] }, { env: [{ name: 'c' }] }] },
      },
      spec: { path: 'spec/containers/env/name' },
      want: {
        kind: 'Pod',
        spec: { containers: [{ env: [{ name: 'X' }, { name: 'X' }] }, { env: [{ name: 'X' }] }] },
      },
    },
    {
      name: 'creates missing maps and the leaf when the spec says create',
      object: { kind: 'Deployment' },
      spec: { path: 'spec/template/metadata/labels', kind: 'Deployment', create: true },
      create: 'map',
      want: { kind: 'Deployment', spec: { template: { metadata: { labels: 'X' } } } },
    },
    {
      name: 'creates nothing without create',
      object: { kind: 'Deployment' },
      spec: { path: 'spec/template/metadata/labels', kind: 'Deployment' },
      create: 'map',
      want: { kind: 'Deployment' },
    },
    {
      name: 'skips objects of another kind',
      object: { kind: 'Service', spec: { replicas: 1 } },
      spec: { path: 'spec/replicas', kind: 'Deployment' },
      want: { kind: 'Service', spec: { replicas: 1 } },
    },
    {
      name: 'matches group and version from apiVersion',
      object: { apiVersion: 'apps/v1', kind: 'StatefulSet', spec: { serviceName: 's' } },
      spec: { path: 'spec/serviceName', group: 'apps', version: 'v1' },
      want: { apiVersion: 'apps/v1', kind: 'StatefulSet', spec: { serviceName: 'X' } },
    },
    {
      name: 'never creates list elements behind a [] hint',
      object: { kind: 'Pod', spec: {} },
      spec: { path: 'spec/containers[]/image', create: true },
      create: 'scalar',
      want: { kind: 'Pod', spec: {} },
    },
    {
      name: 'turns a null map into the created kind',
      object: { kind: 'Pod', metadata: { labels: null } },
      spec: { path: 'metadata/labels/app', create: true },
      create: 'scalar',
      want: { kind: 'Pod', metadata: { labels: { app: 'X' } } },
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      walkFieldSpec(c.object, c.spec, (ref) => ref.set('X'), c.create);
      assert.deepEqual(c.object, c.want);
    });
  }

  it('refuses to walk through a scalar and names the field and object', () => {
    const object: JsonObject = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: 'oops' };
    assert.throws(
      () => walkFieldSpec(object, { path: 'spec/containers' }, () => {}),
      /considering field 'spec\/containers' of object Pod\.v1\.\[noGrp\]\/p\.\[noNs\]: expected sequence or mapping node/,
    );
  });
});
