import { Reason } from '@mooring/api';
import { GitAuthError, GitError } from '@mooring/git';
import { RetryableError, StalledError, WaitingError } from '@mooring/runtime';

/** A Git failure as a reconcile error; @mooring/git has already taken credentials out of the message. */
export function gitFailure(err: unknown): Error {
  if (err instanceof StalledError || err instanceof RetryableError || err instanceof WaitingError) return err;
  const message = (err as Error).message.replace(/\.$/, '');
  if (err instanceof GitAuthError) return new RetryableError(Reason.AuthenticationFailed, message);
  if (err instanceof GitError) return new RetryableError(Reason.GitOperationFailed, message);
  return err as Error;
}
