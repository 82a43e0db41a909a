import { PushRejectedError } from '@mooring/git';
import type { ImageUpdateAutomationRun } from '../../image-update-automation-run.ts';
import { need } from '../../run.ts';
import { gitFailure } from './git-failure.ts';

/**
 * Pushes the commit to `git.push.branch`, and to `git.push.refspec` too when set; nothing to do
 * without a commit. A push rejected because the branch moved is left to the update-branch step.
 */
export async function push(run: ImageUpdateAutomationRun): Promise<undefined> {
  const attempt = need(run.attempt, 'the attempt');
  if (!attempt.commit) return undefined;
  const url = need(run.repo, 'the GitRepository').spec.url;
  const branches = need(run.branches, 'the branches');
  const { git } = run.deps;
  try {
    await git.push(attempt.dir, url, `HEAD:refs/heads/${branches.push}`, attempt.opts);
    const refspec = run.obj.spec.git.push?.refspec;
    if (refspec) await git.push(attempt.dir, url, refspec, attempt.opts);
  } catch (err) {
    if (err instanceof PushRejectedError) throw err;
    throw gitFailure(err);
  }
  attempt.pushed = true;
  return undefined;
}
