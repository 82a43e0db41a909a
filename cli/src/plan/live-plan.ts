// What `mooring plan --kubeconfig` adds: the Kustomization's cluster-side inputs (substituteFrom
// variables, decryption keys) read as the operator reads them, and the head render diffed against
// the live cluster by server-side dry run, as `mooring diff` does, with its inventory for prune.
import { HELM_API_VERSION, KUSTOMIZE_API_VERSION, type ResourceInventory } from '@mooring/api';
import { decryptionOf, substitutionOf } from '@mooring/kustomize-operator/render';
import type { KubeClient, KubeObject } from '@mooring/runtime';
import { describeError } from '../cli-error.ts';
import { diffAgainstCluster } from '../live-diff.ts';
import type { ClusterAccess } from './make-plan.ts';

export function clusterAccess(client: KubeClient): ClusterAccess {
  return {
    async inputsOf(ks) {
      return { substitute: await substitutionOf(client, ks), decryption: await decryptionOf(client, ks) };
    },
    async dryRun(applier, objects) {
      try {
        const live = await client.getOrUndefined<KubeObject & { status?: { inventory?: ResourceInventory } }>(
          {
            apiVersion: applier.kind === 'HelmRelease' ? HELM_API_VERSION : KUSTOMIZE_API_VERSION,
            kind: applier.kind,
            namespace: applier.namespace,
            name: applier.name,
          },
        );
        const owner = {
          metadata: { name: applier.name, namespace: applier.namespace },
          spec: { prune: applier.kind === 'HelmRelease' || applier.object.spec.prune === true },
          status: { inventory: live?.status?.inventory },
        };
        const diffs = await diffAgainstCluster(client, owner, objects);
        return { changes: diffs.map((d) => ({ id: d.id, change: d.change, patch: d.patch })) };
      } catch (err) {
        return { changes: [], error: describeError(err).replace(/\.$/, '') };
      }
    },
  };
}
