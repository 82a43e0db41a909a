import { rm } from 'node:fs/promises';
import { GitRefNotFoundError } from '@mooring/git';
import type { ImageUpdateAutomationRun } from '../../image-update-automation-run.ts';
import { need } from '../../run.ts';
import { gitFailure } from './git-failure.ts';

/**
 * Clones the push branch when it exists, so earlier automation commits are kept; otherwise the
 * checkout branch.
 */
export async function clone(run: ImageUpdateAutomationRun): Promise<undefined> {
  const attempt = need(run.attempt, 'the attempt');
  const { dir, opts } = attempt;
  const url = need(run.repo, 'the GitRepository').spec.url;
  const branches = need(run.branches, 'the branches');
  const { git } = run.deps;
  try {
    attempt.checkout =
      branches.push === branches.checkout
        ? await git.cloneForWrite(url, branches.checkout, dir, opts)
        : await git.cloneForWrite(url, branches.push, dir, opts).catch(async (err: unknown) => {
            if (!(err instanceof GitRefNotFoundError)) throw err;
            await rm(dir, { recursive: true, force: true });
            return git.cloneForWrite(url, branches.checkout, dir, opts);
          });
  } catch (err) {
    throw gitFailure(err);
  }
  return undefined;
}
