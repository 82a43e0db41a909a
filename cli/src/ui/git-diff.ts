import { join } from 'node:path';
import type { Kustomization } from '@mooring/api';
import { fetchArtifact } from '@mooring/artifact';
import type { KubeClient, KubeObject } from '@mooring/runtime';
import { diffAgainstCluster, type ObjectDiff } from '../live-diff.ts';
import type { ObjectIndex } from './object-index.ts';

/**
 * What `mooring diff kustomization` computes, with the folder taken from the source's current
 * artifact instead of a local checkout: Git (as the operator would render it) against the live
 * cluster, by server-side dry-run as the user, Secret values masked.
 */
export async function gitDiff(
  client: KubeClient,
  index: ObjectIndex,
  namespace: string,
  name: string,
): Promise<ObjectDiff[]> {
  const ks = index.get('Kustomization', namespace, name) as (Kustomization & KubeObject) | undefined;
  if (!ks) throw new Error(`Kustomization ${namespace}/${name} is not in the cluster.`);
  const ref = ks.spec.sourceRef;
  const source = index.get(ref.kind, ref.namespace ?? namespace, ref.name);
  const artifact = (source?.status as { artifact?: { url?: string; digest?: string } } | undefined)?.artifact;
  if (!artifact?.url || !artifact.digest)
    throw new Error(
      `${ref.kind} ${ref.namespace ?? namespace}/${ref.name} has no artifact yet: there is nothing to diff.`,
    );
  // Loaded on use: the render engine and the CLI's paths are not needed by the in-cluster UI.
  const { renderKustomization } = await import('../render-local.ts');
  const fetched = await fetchArtifact({ url: artifact.url, digest: artifact.digest, timeoutMs: 60_000 });
  try {
    const rendered = await renderKustomization(
      client,
      structuredClone(ks),
      join(fetched.dir, ks.spec.path ?? '.'),
    );
    return await diffAgainstCluster(client, structuredClone(ks), rendered);
  } finally {
    await fetched.cleanup();
  }
}
