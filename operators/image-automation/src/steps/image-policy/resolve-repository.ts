import { IMAGE_API_VERSION, type ImageRepository, Reason } from '@mooring/api';
import { WaitingError } from '@mooring/runtime';
import { checkCrossNamespace } from '../../cross-namespace.ts';
import type { ImagePolicyRun } from '../../image-policy-run.ts';

/**
 * The ImageRepository `spec.imageRepositoryRef` names, when this namespace may use it (its
 * accessFrom); waits while it does not exist.
 */
export async function resolveRepository(run: ImagePolicyRun): Promise<undefined> {
  const { obj, deps, repoNamespace, repoName, what } = run;
  const repo = await deps.client.getOrUndefined<ImageRepository>({
    apiVersion: IMAGE_API_VERSION,
    kind: 'ImageRepository',
    namespace: repoNamespace,
    name: repoName,
  });
  await checkCrossNamespace(deps.client, {
    noCrossNamespaceRefs: deps.noCrossNamespaceRefs,
    from: obj.metadata.namespace ?? 'default',
    to: repoNamespace,
    what,
    accessFrom: repo?.spec.accessFrom,
  });
  if (!repo) throw new WaitingError(Reason.DependencyNotReady, `${what} not found`, deps.dependencyRequeueMs);
  run.repo = repo;
  return undefined;
}

/** The tags the repository's last scan stored; waits while it has not scanned. */
export async function readTags(run: ImagePolicyRun): Promise<undefined> {
  const { deps, what } = run;
  const scanned = run.repo?.status?.lastScanResult?.revision;
  const tags = scanned ? await deps.store.read(run.repoNamespace, run.repoName) : undefined;
  if (!tags) {
    throw new WaitingError(
      Reason.DependencyNotReady,
      `${what} has not been scanned yet`,
      deps.dependencyRequeueMs,
    );
  }
  run.tags = tags;
  return undefined;
}
