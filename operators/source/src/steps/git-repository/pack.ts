import { ConditionType, Reason } from '@mooring/api';
import { ArtifactTooLargeError, type StoredArtifact } from '@mooring/artifact';
import { StalledError } from '@mooring/runtime';
import { type GitRepositoryRun, verifyModeOf } from '../../git-repository-run.ts';
import { loadExclusionFilter } from '../../ignore-rules.ts';
import { need } from '../../source-run.ts';

/** Packs the checkout, filtered by the ignore rules, as the content-addressed tar.gz in storage. */
export async function packArtifact(run: GitRepositoryRun): Promise<undefined> {
  const { obj, ctx, deps } = run;
  const workdir = need(run.scratch, 'the checkout');
  const checkout = need(run.checkout, 'the checkout');
  const includes = need(run.includes, 'the includes');
  const filter = await loadExclusionFilter(workdir, obj.spec.ignore);
  let stored: StoredArtifact;
  try {
    stored = await deps.storage.archive(run.storageRef, workdir, { filter, ...deps.limits });
  } catch (err) {
    if (err instanceof ArtifactTooLargeError) {
      ctx.setCondition(
        ConditionType.StorageOperationFailed,
        'True',
        Reason.ArchiveOperationFailed,
        err.message,
      );
      throw new StalledError(Reason.ArchiveOperationFailed, err.message);
    }
    throw err;
  }
  run.packed = {
    artifact: { ...stored, revision: checkout.revision },
    observed: {
      includedArtifacts: includes.length ? includes.map((i) => i.artifact) : undefined,
      observedIgnore: obj.spec.ignore,
      observedInclude: obj.spec.include,
      observedSparseCheckout: obj.spec.sparseCheckout,
      sourceVerificationMode: verifyModeOf(obj),
    },
    event: `stored artifact for commit '${checkout.head.subject}'`,
  };
  return undefined;
}
