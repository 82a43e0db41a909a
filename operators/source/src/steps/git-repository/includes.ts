import { ConditionType, type GitRepositoryInclude } from '@mooring/api';
import type { GitRepositoryRun } from '../../git-repository-run.ts';
import { copyIncludes as copyInto, resolveIncludes as findIncludes } from '../../include.ts';
import { need } from '../../source-run.ts';

/** The artifact of every GitRepository `spec.include` names; IncludeUnavailable says why one is missing. */
export async function resolveIncludes(run: GitRepositoryRun): Promise<undefined> {
  const { obj, ctx, storageRef } = run;
  try {
    run.includes = await findIncludes(
      run.deps.client,
      storageRef.namespace,
      storageRef.name,
      (obj.spec.include ?? []) as GitRepositoryInclude[],
    );
  } catch (err) {
    ctx.setCondition(ConditionType.IncludeUnavailable, 'True', 'IncludeUnavailable', (err as Error).message);
    throw err;
  }
  return undefined;
}

/** Copies each included artifact into the checkout, at its `toPath`. */
export async function copyIncludes(run: GitRepositoryRun): Promise<undefined> {
  const { storage, storageRoot } = run.deps;
  await copyInto(storage, storageRoot, need(run.scratch, 'the checkout'), need(run.includes, 'the includes'));
  return undefined;
}
