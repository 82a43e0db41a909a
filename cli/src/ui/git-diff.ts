import { join } from 'node:path';
import type { HelmRelease, Kustomization } from '@mooring/api';
import { fetchArtifact } from '@mooring/artifact';
import { ApiError, type KubeClient, type KubeObject } from '@mooring/runtime';
import { diffAgainstCluster, type ObjectDiff } from '../live-diff.ts';
import type { ObjectIndex } from './object-index.ts';

/** The kinds whose Git the page can diff against the cluster. */
export const DIFF_KINDS = ['Kustomization', 'HelmRelease'] as const;
export type DiffKind = (typeof DIFF_KINDS)[number];

export const isDiffKind = (kind: string): kind is DiffKind =>
  (DIFF_KINDS as readonly string[]).includes(kind);

/**
 * The API server's status when it refused the diff's reads or dry runs for lack of rights (401,
 * 403), so the page shows its refusal as it gave it; undefined for any other failure.
 */
export function refusalStatusOf(err: unknown): number | undefined {
  const api = err instanceof ApiError ? err : (err as { cause?: unknown } | undefined)?.cause;
  return api instanceof ApiError && (api.statusCode === 401 || api.statusCode === 403)
    ? api.statusCode
    : undefined;
}

/**
 * What `mooring diff kustomization|helmrelease` computes, with the files taken from the source's
 * current artifact instead of a local checkout: Git (as the operator would render it) against the
 * live cluster, by server-side dry-run, Secret values masked. Every request goes through `client`:
 * the local UI's is the user's kubeconfig, the in-cluster UI's impersonates the signed-in user, so
 * the API server's RBAC decides what they may read and dry-run. Only the object itself and its
 * source come from the index (what every signed-in user already sees).
 */
export async function gitDiff(
  client: KubeClient,
  index: ObjectIndex,
  kind: DiffKind,
  namespace: string,
  name: string,
): Promise<ObjectDiff[]> {
  return kind === 'HelmRelease'
    ? helmReleaseDiff(client, index, namespace, name)
    : kustomizationDiff(client, index, namespace, name);
}

async function kustomizationDiff(
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
  // Loaded on use: the render engine is not needed until someone asks for a diff.
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

// As `mooring diff helmrelease` without --chart: the chart artifact of its HelmChart or
// OCIRepository, its values and release history read through `client`, pruning as Helm does.
async function helmReleaseDiff(
  client: KubeClient,
  index: ObjectIndex,
  namespace: string,
  name: string,
): Promise<ObjectDiff[]> {
  const hr = index.get('HelmRelease', namespace, name) as (HelmRelease & KubeObject) | undefined;
  if (!hr) throw new Error(`HelmRelease ${namespace}/${name} is not in the cluster.`);
  const { renderHelmReleaseLocally } = await import('../helm-release-local.ts');
  const release = await renderHelmReleaseLocally(client, structuredClone(hr), undefined);
  const owner = { metadata: hr.metadata, spec: { prune: true }, status: { inventory: hr.status?.inventory } };
  return diffAgainstCluster(client, owner, release.objects);
}
