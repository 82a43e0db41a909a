import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  HELM_API_VERSION,
  KUSTOMIZE_API_VERSION,
  type Kustomization,
  kindApiVersion,
  SOURCE_KINDS,
} from '@mooring/api';
import type { KubeObject } from '@mooring/runtime';
import { type KustomizationDeps, kustomizationReconciler } from './kustomization-reconciler.ts';

// Building the reconciler touches none of its dependencies; the watches are plain data.
const reconciler = kustomizationReconciler({} as KustomizationDeps);

const kustomization = (name: string, kind: string, source: string): Kustomization =>
  ({
    apiVersion: KUSTOMIZE_API_VERSION,
    kind: 'Kustomization',
    metadata: { namespace: 'apps', name },
    spec: { sourceRef: { kind, name: source } },
  }) as unknown as Kustomization;

const source = (kind: string, name: string, revision: string): KubeObject => ({
  apiVersion: kindApiVersion(kind as (typeof SOURCE_KINDS)[number]),
  kind,
  metadata: { namespace: 'apps', name },
  status: { artifact: { revision } },
});

test('the Kustomization reconciler watches its own generations, every source kind, at its API version, and the kinds it may depend on', () => {
  assert.deepEqual(
    reconciler.watches?.map((w) => `${w.apiVersion} ${w.kind}`),
    [
      // A new generation supersedes a reconcile in flight; the informer itself enqueues it.
      `${KUSTOMIZE_API_VERSION} Kustomization`,
      ...SOURCE_KINDS.map((k) => `${kindApiVersion(k)} ${k}`),
      `${KUSTOMIZE_API_VERSION} Kustomization`,
      `${HELM_API_VERSION} HelmRelease`,
    ],
  );
});

test("a source's new revision enqueues the Kustomizations that read that kind and name", () => {
  const objects = [
    kustomization('a', 'GitRepository', 'repo'),
    kustomization('b', 'OCIRepository', 'repo'),
    kustomization('c', 'GitRepository', 'other'),
  ];
  for (const kind of SOURCE_KINDS) {
    const watch = reconciler.watches!.find((w) => w.kind === kind)!;
    const readers = objects.filter((k) => k.spec.sourceRef.kind === kind && k.spec.sourceRef.name === 'repo');
    const changed = source(kind, 'repo', 'sha1:2');
    assert.deepEqual(
      watch.enqueue(changed, source(kind, 'repo', 'sha1:1'), objects),
      readers.map((k) => `apps/${k.metadata.name}`),
    );
    assert.deepEqual(watch.enqueue(changed, changed, objects), [], 'same revision: nothing to do');
  }
});
