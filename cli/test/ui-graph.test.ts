// The delivery graph's cut and filters, on an in-memory index (a unit test: no cluster; the
// browser tests draw the graph from a real one).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { kindDefinition } from '@mooring/api';
import type { KubeObject } from '@mooring/runtime';
import { type GraphIndex, objectGraph } from '../src/ui/object-graph.ts';
import { rowKey } from '../src/ui/object-index.ts';

function indexOf(objects: KubeObject[]): GraphIndex {
  const byKey = new Map(
    objects.map((o) => [rowKey(o.kind, o.metadata.namespace ?? '', o.metadata.name!), o]),
  );
  return {
    *all() {
      for (const object of objects) yield { def: kindDefinition(object.kind), object };
    },
    get: (kind, namespace, name) => byKey.get(rowKey(kind, namespace, name)),
  };
}

const ready = (ok: boolean, message = '') => ({
  conditions: [
    { type: 'Ready', status: ok ? 'True' : 'False', reason: ok ? 'Succeeded' : 'BuildFailed', message },
  ],
});

function kustomization(ns: string, name: string, objects: number, ok = true, dependsOn?: string): KubeObject {
  return {
    apiVersion: 'kustomize.mooring.dev/v1',
    kind: 'Kustomization',
    metadata: { name, namespace: ns },
    spec: {
      sourceRef: { kind: 'GitRepository', name: 'platform' },
      ...(dependsOn && { dependsOn: [{ name: dependsOn }] }),
    },
    status: {
      ...ready(ok, ok ? 'Applied' : 'kustomize build failed: missing resource'),
      inventory: {
        entries: Array.from({ length: objects }, (_, k) => ({
          id: `${ns}_${name}-cm-${k}__ConfigMap`,
          v: 'v1',
        })),
      },
    },
  };
}

const source = (ns: string): KubeObject => ({
  apiVersion: 'source.mooring.dev/v1',
  kind: 'GitRepository',
  metadata: { name: 'platform', namespace: ns },
  spec: { url: 'https://example.invalid/platform.git' },
  status: ready(true),
});

const name = (i: number): string => `app-${String(i).padStart(4, '0')}`;

test('a small graph is whole: source, dependsOn and applied edges, nothing cut', () => {
  const graph = objectGraph(
    indexOf([source('a'), kustomization('a', 'infra', 2), kustomization('a', 'apps', 1, true, 'infra')]),
  );
  assert.equal(graph.truncated, false);
  assert.deepEqual(graph.appliers, { total: 2, shown: 2 });
  assert.equal(graph.nodes.length, 1 + 2 + 3);
  const has = (from: string, to: string, type: string) =>
    graph.edges.some((e) => e.from === from && e.to === to && e.type === type);
  assert.ok(has('Kustomization/a/infra', 'Kustomization/a/apps', 'dependsOn'));
  assert.ok(has('GitRepository/a/platform', 'Kustomization/a/apps', 'source'));
  assert.ok(has('Kustomization/a/infra', 'ConfigMap/a/infra-cm-1', 'applied'));
});

test('5,000 Kustomizations × 10 objects: the graph is cut near the limit, failing trees first, and says how many it drew', () => {
  const objects = [source('big')];
  for (let i = 0; i < 5000; i++) objects.push(kustomization('big', name(i), 10, i % 1000 !== 999));
  const graph = objectGraph(indexOf(objects), {}, 1000);
  assert.equal(graph.truncated, true);
  assert.equal(graph.maxNodes, 1000);
  assert.ok(graph.nodes.length >= 1000 && graph.nodes.length <= 1000 + 2, `${graph.nodes.length} nodes`);
  assert.equal(graph.appliers.total, 5000);
  // 11 nodes a tree (the source is shared): about 90 trees fit.
  assert.ok(graph.appliers.shown > 80 && graph.appliers.shown < 100, `${graph.appliers.shown} shown`);
  // The 5 failing ones (app-0999, app-1999, ...) are all drawn, before any that is Ready.
  const failing = graph.nodes.filter((n) => n.kind === 'Kustomization' && n.state === 'failed');
  assert.deepEqual(
    failing.map((n) => n.name),
    ['app-0999', 'app-1999', 'app-2999', 'app-3999', 'app-4999'],
  );
  assert.ok(
    graph.nodes.some((n) => n.id === 'ConfigMap/big/app-4999-cm-9'),
    "a failing tree's objects are drawn",
  );
  assert.ok(!graph.nodes.some((n) => n.name === 'app-4998'), 'a Ready tree late in the order is left out');
  // Every edge joins two drawn nodes.
  const ids = new Set(graph.nodes.map((n) => n.id));
  assert.ok(graph.edges.every((e) => ids.has(e.from) && ids.has(e.to)));
});

test('one tree larger than the limit keeps its owner and is cut', () => {
  const graph = objectGraph(indexOf([source('a'), kustomization('a', 'huge', 5000)]), {}, 1000);
  assert.equal(graph.truncated, true);
  assert.equal(graph.nodes.length, 1000);
  assert.ok(graph.nodes.some((n) => n.id === 'Kustomization/a/huge'));
});

test('the namespace and name filters choose the trees, as the overview does', () => {
  const objects = [source('a'), source('b')];
  for (let i = 0; i < 300; i++) objects.push(kustomization('a', name(i), 4), kustomization('b', name(i), 4));
  const byName = objectGraph(indexOf(objects), { namespace: 'b', search: 'APP-012' }, 1000);
  assert.equal(byName.truncated, false);
  assert.deepEqual(
    byName.nodes.filter((n) => n.kind === 'Kustomization').map((n) => n.id),
    Array.from({ length: 10 }, (_, k) => `Kustomization/b/app-012${k}`),
  );
  // The tree's source is drawn although its name does not match.
  assert.ok(byName.nodes.some((n) => n.id === 'GitRepository/b/platform'));
  const failing = objectGraph(
    indexOf([...objects, kustomization('a', 'broken', 1, false)]),
    { search: 'missing resource' },
    1000,
  );
  assert.deepEqual(
    failing.nodes.filter((n) => n.mooring && n.kind === 'Kustomization').map((n) => n.name),
    ['broken'],
  );
});
