import { FINALIZER, type GitRepository, SOURCE_API_VERSION } from '@mooring/api';
import type { Reconciler } from '@mooring/runtime';
import type { GitRepositoryDeps, GitRepositoryRun } from './git-repository-run.ts';
import { storageRefOf } from './source-run.ts';
import { reconcileSource } from './steps/artifact.ts';
import { GIT_REPOSITORY_STEPS } from './steps/git-repository/index.ts';
import { specTimeoutMs } from './timeouts.ts';

/**
 * GitRepository: its reconcile is the list of steps in ./steps/git-repository. The ref is
 * resolved cheaply; when the stored artifact already holds that revision (built from the same
 * spec) that is all. Otherwise that one commit is fetched, its signature verified, includes
 * copied in, the tree filtered by the ignore rules and stored as a tar.gz.
 */
export function gitRepositoryReconciler(deps: GitRepositoryDeps): Reconciler<GitRepository> {
  return {
    apiVersion: SOURCE_API_VERSION,
    kind: 'GitRepository',
    finalizer: FINALIZER,
    defaultIntervalMs: 60_000,

    reconcile(obj, ctx) {
      const run: GitRepositoryRun = {
        obj,
        ctx,
        deps,
        status: ctx.status as NonNullable<GitRepository['status']>,
        storage: deps.storage,
        storageRef: storageRefOf('GitRepository', obj),
        timeoutMs: specTimeoutMs(obj.spec.timeout),
      };
      return reconcileSource(GIT_REPOSITORY_STEPS, run);
    },

    async finalize(obj) {
      await deps.storage.remove(storageRefOf('GitRepository', obj));
    },

    // A repository that includes another is rebuilt as soon as the included one stores a new artifact.
    watches: [
      {
        apiVersion: SOURCE_API_VERSION,
        kind: 'GitRepository',
        enqueue(changed, old, objects) {
          const digest = (o: unknown) => (o as GitRepository | undefined)?.status?.artifact?.digest;
          if (digest(changed) === digest(old)) return [];
          const { namespace, name } = changed.metadata;
          return objects
            .filter(
              (o) =>
                o.metadata.namespace === namespace &&
                (o.spec.include ?? []).some((i) => i.repository.name === name),
            )
            .map((o) => `${o.metadata.namespace}/${o.metadata.name}`);
        },
      },
    ],
  };
}
