// The cluster Secret finalizer over an in-memory fake of the two calls it makes (list, merge patch):
// a Secret being deleted keeps the set's finalizer while a Kustomization or a HelmRelease still
// names it in spec.kubeConfig, since either needs it to prune or uninstall on that cluster.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { KUSTOMIZATION_SET_FINALIZER } from '@mooring/api';
import type { KubeClient } from '@mooring/runtime';
import { ClusterProbe } from './cluster-probe.ts';
import { releaseClusterSecrets } from './steps.ts';

function fakeClient(named: Record<string, string[]>) {
  const patched: string[] = [];
  const client = {
    async list(_apiVersion: string, kind: string) {
      return {
        items: (named[kind] ?? []).map((secret) => ({
          metadata: { name: `${kind}-${secret}` },
          spec: { kubeConfig: { secretRef: { name: secret } } },
        })),
      };
    },
    async mergePatch(key: { name: string }) {
      patched.push(key.name);
      return {};
    },
  } as unknown as KubeClient;
  return { client, patched };
}

const deleting = (name: string) => ({
  name,
  labels: {},
  annotations: {},
  deleting: true,
  finalizers: [KUSTOMIZATION_SET_FINALIZER],
});

describe('releaseClusterSecrets', () => {
  test('a Secret a HelmRelease still names keeps the finalizer; one nothing names is released', async () => {
    const { client, patched } = fakeClient({ HelmRelease: ['cluster-a'], Kustomization: ['cluster-b'] });
    await releaseClusterSecrets(
      client,
      'team',
      [deleting('cluster-a'), deleting('cluster-b'), deleting('cluster-c')],
      new ClusterProbe(),
    );
    assert.deepEqual(patched, ['cluster-c']);
  });
});
