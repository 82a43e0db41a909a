import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { KustomizeError } from '../errors.ts';
import type { JsonObject } from '../resource.ts';
import type { OpenApiDocument } from './schema.ts';
import { schemaFor } from './schema.ts';
import { strategicMerge } from './strategic-merge.ts';

// Expected outputs of the list cases were produced by `kustomize build` v5.8.0 (a base resource plus
// the patch in `patches:`); kustomize prints keys sorted, so only list order is compared here.

function deployment(podSpec: JsonObject, metadata: JsonObject = {}): JsonObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', ...metadata },
    spec: { template: { spec: podSpec } },
  };
}

/** The map at a field of a merge result; fails the test when the result was deleted. */
function at(result: JsonObject | null, key: string): JsonObject {
  assert.ok(result, 'the resource was deleted');
  return result[key] as JsonObject;
}

function podSpec(result: JsonObject | null): JsonObject {
  return at(at(at(result, 'spec'), 'template'), 'spec');
}

function merge(original: JsonObject, patch: JsonObject, extra?: OpenApiDocument): JsonObject | null {
  const schema = schemaFor(String(original.apiVersion), String(original.kind), extra);
  return strategicMerge(original, patch, schema, extra ? { openapi: extra } : {});
}

/** A merge with the API server's meaning of $retainKeys, $setElementOrder and $deleteFromPrimitiveList. */
function serverMerge(original: JsonObject, patch: JsonObject): JsonObject | null {
  const schema = schemaFor(String(original.apiVersion), String(original.kind));
  return strategicMerge(original, patch, schema, { applyServerDirectives: true });
}

const crdDocument: OpenApiDocument = {
  definitions: {
    'v1alpha1.Widget': {
      type: 'object',
      'x-kubernetes-group-version-kind': [{ group: 'example.com', version: 'v1alpha1', kind: 'Widget' }],
      properties: {
        spec: {
          type: 'object',
          properties: {
            parts: {
              type: 'array',
              items: { $ref: '#/definitions/v1alpha1.Part' },
              'x-kubernetes-patch-merge-key': 'name',
              'x-kubernetes-patch-strategy': 'merge',
            },
          },
        },
      },
    },
    'v1alpha1.Part': { type: 'object', properties: { name: { type: 'string' } } },
  },
};

const widget: JsonObject = {
  apiVersion: 'example.com/v1alpha1',
  kind: 'Widget',
  metadata: { name: 'w' },
  spec: { parts: [{ name: 'a', size: 1 }, { name: 'b' }] },
};

describe('strategicMerge list rules', () => {
  test('containers merge by name: patch elements first, then the original ones', () => {
    const result = merge(
      deployment({
        containers: [
          { name: 'a', image: 'a' },
          { name: 'b', image: 'b' },
        ],
      }),
      deployment({
        containers: [
          { name: 'c', image: 'c' },
          { name: 'a', image: 'a2' },
        ],
      }),
    );
    assert.deepEqual(podSpec(result).containers, [
      { name: 'c', image: 'c' },
      { name: 'a', image: 'a2' },
      { name: 'b', image: 'b' },
    ]);
  });

  test('env merges by name inside a merged container', () => {
    const result = merge(
      deployment({
        containers: [
          {
            name: 'a',
            env: [
              { name: 'X', value: '1' },
              { name: 'Y', value: '2' },
            ],
          },
        ],
      }),
      deployment({
        containers: [
          {
            name: 'a',
            env: [
              { name: 'Z', value: '3' },
              { name: 'X', value: '9' },
            ],
          },
        ],
      }),
    );
    assert.deepEqual((podSpec(result).containers as JsonObject[])[0]!.env, [
      { name: 'Z', value: '3' },
      { name: 'X', value: '9' },
      { name: 'Y', value: '2' },
    ]);
  });

  test('volumeMounts merge by mountPath', () => {
    const result = merge(
      deployment({ containers: [{ name: 'a', volumeMounts: [{ mountPath: '/data', name: 'old' }] }] }),
      deployment({
        containers: [
          {
            name: 'a',
            volumeMounts: [
              { mountPath: '/cache', name: 'cache' },
              { mountPath: '/data', name: 'new' },
            ],
          },
        ],
      }),
    );
    assert.deepEqual((podSpec(result).containers as JsonObject[])[0]!.volumeMounts, [
      { mountPath: '/cache', name: 'cache' },
      { mountPath: '/data', name: 'new' },
    ]);
  });

  test('container ports merge by containerPort and protocol; a missing protocol matches', () => {
    const result = merge(
      deployment({
        containers: [{ name: 'a', ports: [{ containerPort: 80 }, { containerPort: 81, protocol: 'UDP' }] }],
      }),
      deployment({
        containers: [
          {
            name: 'a',
            ports: [
              { containerPort: 81, protocol: 'TCP' },
              { containerPort: 80, name: 'http' },
            ],
          },
        ],
      }),
    );
    assert.deepEqual((podSpec(result).containers as JsonObject[])[0]!.ports, [
      { containerPort: 81, protocol: 'TCP' },
      { containerPort: 80, name: 'http' },
      { containerPort: 81, protocol: 'UDP' },
    ]);
  });

  test('Service ports merge by port', () => {
    const service = (ports: JsonObject[]): JsonObject => ({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 's' },
      spec: { ports },
    });
    const result = merge(
      service([
        { name: 'http', port: 80, targetPort: 8080 },
        { name: 'https', port: 443 },
      ]),
      service([
        { port: 443, targetPort: 9443 },
        { name: 'metrics', port: 9090 },
      ]),
    );
    assert.deepEqual(at(result, 'spec').ports, [
      { name: 'https', port: 443, targetPort: 9443 },
      { name: 'metrics', port: 9090 },
      { name: 'http', port: 80, targetPort: 8080 },
    ]);
  });

  test('a Service port patched without the protocol the original spells out is left as is, as in kustomize', () => {
    const service = (ports: JsonObject[]): JsonObject => ({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 's' },
      spec: { ports },
    });
    const result = merge(
      service([{ name: 'https', port: 443, targetPort: 8443, protocol: 'TCP' }]),
      service([{ port: 443, targetPort: 9443 }]),
    );
    assert.deepEqual(at(result, 'spec').ports, [
      { name: 'https', port: 443, targetPort: 8443, protocol: 'TCP' },
    ]);
  });

  test('volumes merge by name and $retainKeys drops the old volume source (server directives)', () => {
    const result = serverMerge(
      deployment({
        volumes: [
          { name: 'v1', configMap: { name: 'cm' } },
          { name: 'v2', emptyDir: {} },
        ],
      }),
      deployment({ volumes: [{ name: 'v1', $retainKeys: ['name', 'secret'], secret: { secretName: 's' } }] }),
    );
    assert.deepEqual(podSpec(result).volumes, [
      { name: 'v1', secret: { secretName: 's' } },
      { name: 'v2', emptyDir: {} },
    ]);
  });

  test('tolerations have no merge key and are replaced', () => {
    const result = merge(
      deployment({ tolerations: [{ key: 'k1' }, { key: 'k3' }] }),
      deployment({ tolerations: [{ key: 'k2' }] }),
    );
    assert.deepEqual(podSpec(result).tolerations, [{ key: 'k2' }]);
  });

  test('finalizers (a primitive list with strategy merge) are unioned, patch values first', () => {
    const result = merge(
      deployment({}, { finalizers: ['x', 'y'] }),
      deployment({}, { finalizers: ['y', 'z'] }),
    );
    assert.deepEqual(at(result, 'metadata').finalizers, ['y', 'z', 'x']);
  });

  test('lists of an unknown kind (a CRD) are replaced', () => {
    const result = merge(widget, { ...widget, spec: { parts: [{ name: 'c' }, { name: 'a', size: 9 }] } });
    assert.deepEqual(at(result, 'spec').parts, [{ name: 'c' }, { name: 'a', size: 9 }]);
  });

  test('CRD lists merge by the key an openapi document gives', () => {
    const result = merge(
      widget,
      { ...widget, spec: { parts: [{ name: 'c' }, { name: 'a', size: 9 }] } },
      crdDocument,
    );
    assert.deepEqual(at(result, 'spec').parts, [{ name: 'c' }, { name: 'a', size: 9 }, { name: 'b' }]);
  });

  test('an openapi document replaces the built-in schema, as in kustomize: containers are then replaced', () => {
    const result = merge(
      deployment({ containers: [{ name: 'a' }, { name: 'b' }] }),
      deployment({ containers: [{ name: 'c' }] }),
      crdDocument,
    );
    assert.deepEqual(podSpec(result).containers, [{ name: 'c' }]);
  });

  test('an object with apiVersion/kind under an unknown field gets its own kind schema', () => {
    const wrapper = (containers: JsonObject[]): JsonObject => ({
      apiVersion: 'example.com/v1',
      kind: 'Wrapper',
      metadata: { name: 'w' },
      spec: {
        template: { apiVersion: 'apps/v1', kind: 'Deployment', spec: { template: { spec: { containers } } } },
      },
    });
    const result = merge(
      wrapper([{ name: 'a' }, { name: 'b' }]),
      wrapper([{ name: 'c' }, { name: 'a', image: 'x' }]),
    );
    const inner = (at(result, 'spec').template as JsonObject).spec as JsonObject;
    assert.deepEqual(((inner.template as JsonObject).spec as JsonObject).containers, [
      { name: 'c' },
      { name: 'a', image: 'x' },
      { name: 'b' },
    ]);
  });
});

describe('strategicMerge maps and directives', () => {
  test('maps merge recursively and null deletes a key', () => {
    const result = merge(
      deployment({}, { labels: { a: '1', b: '2' }, creationTimestamp: null }),
      deployment({}, { labels: { a: null, c: '3' }, annotations: { x: null, y: 'y' } }),
    );
    assert.deepEqual(at(result, 'metadata'), {
      name: 'web',
      labels: { b: '2', c: '3' },
      // A null the original spells out is kept; a null the patch adds is not.
      creationTimestamp: null,
      annotations: { y: 'y' },
    });
  });

  test('$patch: replace on a map replaces it', () => {
    const result = merge(
      deployment({}, { labels: { a: '1' } }),
      deployment({}, { labels: { $patch: 'replace', x: 'y' } }),
    );
    assert.deepEqual(at(result, 'metadata').labels, { x: 'y' });
  });

  test('$patch: delete on a map removes it', () => {
    const result = merge(
      deployment({ securityContext: { runAsUser: 1 }, hostname: 'h' }),
      deployment({ securityContext: { $patch: 'delete' } }),
    );
    assert.deepEqual(podSpec(result), { hostname: 'h' });
  });

  test('$patch: merge on a map is the default merge', () => {
    const result = merge(
      deployment({}, { labels: { a: '1' } }),
      deployment({}, { labels: { $patch: 'merge', b: '2' } }),
    );
    assert.deepEqual(at(result, 'metadata').labels, { a: '1', b: '2' });
  });

  test('$patch: delete on a list item removes that item only', () => {
    const result = merge(
      deployment({ containers: [{ name: 'a' }, { name: 'b' }] }),
      deployment({
        containers: [
          { name: 'b', $patch: 'delete' },
          { name: 'zz', $patch: 'delete' },
        ],
      }),
    );
    assert.deepEqual(podSpec(result).containers, [{ name: 'a' }]);
  });

  test('$patch: replace on a list item keeps the original item, as kustomize does', () => {
    const result = merge(
      deployment({
        containers: [
          { name: 'a', image: 'a' },
          { name: 'b', image: 'b' },
        ],
      }),
      deployment({ containers: [{ name: 'b', $patch: 'replace', image: 'b2' }] }),
    );
    assert.deepEqual(podSpec(result).containers, [
      { name: 'b', image: 'b' },
      { name: 'a', image: 'a' },
    ]);
  });

  test('$patch: replace as a list element replaces the whole list', () => {
    const result = merge(
      deployment({ containers: [{ name: 'a' }, { name: 'b' }] }),
      deployment({ containers: [{ $patch: 'replace' }, { name: 'z' }] }),
    );
    assert.deepEqual(podSpec(result).containers, [{ name: 'z' }]);
  });

  test('$patch: delete as a list element removes the whole list', () => {
    const result = merge(
      deployment({ containers: [{ name: 'a' }], hostname: 'h' }),
      deployment({ containers: [{ $patch: 'delete' }] }),
    );
    assert.deepEqual(podSpec(result), { hostname: 'h' });
  });

  test('a directive list added where the original has none keeps its elements and loses the directive', () => {
    const result = merge(
      deployment({ containers: [{ name: 'a' }] }),
      deployment({ volumes: [{ $patch: 'replace' }, { name: 'v9', emptyDir: {} }] }),
    );
    assert.deepEqual(podSpec(result).volumes, [{ name: 'v9', emptyDir: {} }]);
  });

  test('$deleteFromPrimitiveList removes values from a primitive list (server directives)', () => {
    const result = serverMerge(
      deployment({}, { finalizers: ['a', 'b', 'c'] }),
      deployment({}, { '$deleteFromPrimitiveList/finalizers': ['b'] }),
    );
    assert.deepEqual(at(result, 'metadata'), { name: 'web', finalizers: ['a', 'c'] });
  });

  test('$setElementOrder orders the listed elements (server directives)', () => {
    const result = serverMerge(
      deployment({ containers: [{ name: 'a' }, { name: 'b' }, { name: 'c' }] }),
      deployment({
        '$setElementOrder/containers': [{ name: 'c' }, { name: 'a' }],
        containers: [{ name: 'a', image: 'x' }],
      }),
    );
    assert.deepEqual(podSpec(result), {
      containers: [{ name: 'c' }, { name: 'b' }, { name: 'a', image: 'x' }],
    });
  });

  test('by default $retainKeys, $setElementOrder and $deleteFromPrimitiveList are copied through, as kustomize does', () => {
    const result = merge(
      deployment(
        { containers: [{ name: 'a' }, { name: 'b' }], volumes: [{ name: 'v1', configMap: { name: 'cm' } }] },
        { finalizers: ['a', 'b'] },
      ),
      deployment(
        {
          '$setElementOrder/containers': [{ name: 'b' }, { name: 'a' }],
          volumes: [{ name: 'v1', $retainKeys: ['name', 'secret'], secret: { secretName: 's' } }],
        },
        { '$deleteFromPrimitiveList/finalizers': ['b'] },
      ),
    );
    assert.deepEqual(at(result, 'metadata'), {
      name: 'web',
      finalizers: ['a', 'b'],
      '$deleteFromPrimitiveList/finalizers': ['b'],
    });
    assert.deepEqual(podSpec(result), {
      containers: [{ name: 'a' }, { name: 'b' }],
      '$setElementOrder/containers': [{ name: 'b' }, { name: 'a' }],
      volumes: [
        {
          name: 'v1',
          $retainKeys: ['name', 'secret'],
          configMap: { name: 'cm' },
          secret: { secretName: 's' },
        },
      ],
    });
  });

  test('whole-resource $patch: replace leaves the resource unchanged, as kustomize does', () => {
    const original = deployment({ containers: [{ name: 'a' }] });
    assert.deepEqual(merge(original, { ...deployment({ hostname: 'h' }), $patch: 'replace' }), original);
  });

  test('whole-resource $patch: delete returns null', () => {
    assert.equal(merge(deployment({}), { ...deployment({}), $patch: 'delete' }), null);
  });

  test('no directive key survives server directives, even inside a replaced list', () => {
    const result = serverMerge(
      deployment({ tolerations: [{ key: 'k1' }] }),
      deployment({ tolerations: [{ $patch: 'replace' }, { key: 'k2' }] }),
    );
    assert.doesNotMatch(
      JSON.stringify(result),
      /\$patch|\$retainKeys|\$setElementOrder|\$deleteFromPrimitiveList/,
    );
    assert.deepEqual(podSpec(result).tolerations, [{ key: 'k2' }]);
  });

  test('a $patch: delete kyaml would leave in its output removes its element instead', () => {
    // Under a replaced map kyaml merges the patch's lists with themselves and keeps such elements verbatim.
    const result = merge(
      deployment({ containers: [{ name: 'b' }] }),
      deployment({
        $patch: 'replace',
        containers: [{ name: 'a', env: [{ name: 'Z' }, { name: 'X', value: '2', $patch: 'delete' }] }],
      }),
    );
    assert.deepEqual(podSpec(result).containers, [{ name: 'a', env: [{ name: 'Z' }] }]);
  });

  test('an unknown $patch value is a KustomizeError that names it and the field', () => {
    assert.throws(
      () =>
        merge(
          deployment({ containers: [{ name: 'a' }] }),
          deployment({ containers: [{ name: 'a', $patch: 'nuke' }] }),
        ),
      (error: unknown) =>
        error instanceof KustomizeError &&
        /unknown patch strategy 'nuke'/.test(error.message) &&
        /containers/.test(error.message),
    );
  });

  test('a patch whose shape differs from the original is a KustomizeError', () => {
    assert.throws(
      () => merge(deployment({ containers: [{ name: 'a' }] }), deployment({ containers: { name: 'a' } })),
      KustomizeError,
    );
  });

  test('the original and the patch are not modified', () => {
    const original = deployment({ containers: [{ name: 'a' }] }, { labels: { a: '1' } });
    const patch = deployment({ containers: [{ name: 'a', $patch: 'delete' }] }, { labels: { a: null } });
    const before = [structuredClone(original), structuredClone(patch)];
    merge(original, patch);
    assert.deepEqual([original, patch], before);
  });
});
