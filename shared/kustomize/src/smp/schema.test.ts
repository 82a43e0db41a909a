import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { OpenApiDocument } from './schema.ts';
import { schemaFor } from './schema.ts';

describe('schemaFor', () => {
  test('navigates a Deployment to its containers, env and ports merge keys', () => {
    const pod = schemaFor('apps/v1', 'Deployment')?.field('spec')?.field('template')?.field('spec');
    const containers = pod?.field('containers');
    assert.deepEqual(containers?.list(), { strategy: 'merge', mergeKey: 'name', mergeKeys: ['name'] });
    assert.deepEqual(containers?.items()?.field('env')?.list()?.mergeKeys, ['name']);
    assert.deepEqual(containers?.items()?.field('volumeMounts')?.list()?.mergeKeys, ['mountPath']);
    assert.deepEqual(containers?.items()?.field('ports')?.list()?.mergeKeys, ['containerPort', 'protocol']);
    assert.equal(pod?.field('volumes')?.list()?.strategy, 'merge,retainKeys');
    assert.equal(pod?.field('tolerations')?.list(), undefined);
  });

  test('core kinds use the bare version and Service ports merge by port', () => {
    const ports = schemaFor('v1', 'Service')?.field('spec')?.field('ports');
    assert.equal(ports?.list()?.mergeKey, 'port');
    assert.equal(
      schemaFor('v1', 'ConfigMap')?.field('metadata')?.field('finalizers')?.list()?.strategy,
      'merge',
    );
  });

  test('string-keyed maps of objects resolve their value schema', () => {
    const versions = schemaFor('apiextensions.k8s.io/v1', 'CustomResourceDefinition')
      ?.field('spec')
      ?.field('versions')
      ?.items();
    const properties = versions?.field('schema')?.field('openAPIV3Schema')?.field('properties');
    assert.ok(
      properties?.field('anything')?.field('properties'),
      'JSONSchemaProps.properties values are JSONSchemaProps',
    );
  });

  test('unknown kinds have no schema', () => {
    assert.equal(schemaFor('example.com/v1', 'Widget'), undefined);
    assert.equal(schemaFor('apps/v1', 'Nope'), undefined);
  });

  test('an openapi document gives CRDs merge keys through $ref, and replaces the built-in schema', () => {
    const document: OpenApiDocument = {
      definitions: {
        'v1.Widget': {
          'x-kubernetes-group-version-kind': [{ group: 'example.com', version: 'v1', kind: 'Widget' }],
          properties: { spec: { $ref: '#/definitions/v1.WidgetSpec' } },
        },
        'v1.WidgetSpec': {
          properties: {
            parts: {
              type: 'array',
              items: { $ref: '#/definitions/v1.Part' },
              'x-kubernetes-patch-strategy': 'merge',
              'x-kubernetes-patch-merge-key': 'name',
            },
          },
        },
        'v1.Part': { properties: { name: { type: 'string' } } },
      },
    };
    const parts = schemaFor('example.com/v1', 'Widget', document)?.field('spec')?.field('parts');
    assert.deepEqual(parts?.list(), { strategy: 'merge', mergeKey: 'name', mergeKeys: ['name'] });
    assert.ok(parts?.items()?.field('name'));
    assert.equal(schemaFor('apps/v1', 'Deployment', document), undefined);
  });

  test('a self-referencing $ref in an openapi document ends instead of looping', () => {
    const document: OpenApiDocument = {
      definitions: {
        Loop: { $ref: '#/definitions/Loop' },
        'v1.W': {
          'x-kubernetes-group-version-kind': [{ group: 'x.io', version: 'v1', kind: 'W' }],
          properties: { spec: { $ref: '#/definitions/Loop' } },
        },
      },
    };
    assert.equal(schemaFor('x.io/v1', 'W', document)?.field('spec'), undefined);
  });
});
