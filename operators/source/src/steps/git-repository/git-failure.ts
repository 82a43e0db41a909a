import { Reason } from '@mooring/api';
import { GitAuthError } from '@mooring/git';
import { RetryableError, StalledError } from '@mooring/runtime';
import type { GitRepositoryRun } from '../../git-repository-run.ts';
import { markFetchFailed } from '../../source-conditions.ts';

/** Turns a Git failure into FetchFailed and a retry; the messages come sanitised from @mooring/git. */
export function gitFailure(run: GitRepositoryRun, err: unknown): never {
  if (err instanceof StalledError || err instanceof RetryableError) throw err;
  const message = (err as Error).message;
  const reason = err instanceof GitAuthError ? Reason.AuthenticationFailed : Reason.GitOperationFailed;
  markFetchFailed(run.ctx, reason, message);
  throw new RetryableError(reason, message);
}
