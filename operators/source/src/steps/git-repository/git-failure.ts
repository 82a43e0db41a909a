import { type GitRepository, Reason } from '@mooring/api';
import { GitAuthError, GitRefNotFoundError, redactUrl } from '@mooring/git';
import { RetryableError, StalledError } from '@mooring/runtime';
import type { GitRepositoryRun } from '../../git-repository-run.ts';
import { markFetchFailed } from '../../source-conditions.ts';

/** An HTTP 404 for the repository itself, as isomorphic-git and the git command line report it. */
const REPOSITORY_NOT_FOUND = /HTTP Error: 404|repository '[^']*' not found|returned error: 404/i;
const HOST_KEY = /host key|IDENTIFICATION HAS CHANGED/i;

/**
 * What a failed Git call means for this object, in words that point at the fix: a refused login
 * names the Secret whose credentials were sent, or says that none is set; a repository the
 * server does not have is "not found" at its URL. The messages from @mooring/git carry no secrets.
 */
export function explainGitFailure(obj: GitRepository, err: unknown): string {
  const message = (err as Error).message;
  const secret = obj.spec.secretRef?.name;
  const where = secret && `Secret ${obj.metadata.namespace ?? 'default'}/${secret}`;
  if (err instanceof GitAuthError) {
    if (!where) return `the server asks for credentials and spec.secretRef is not set: ${message}`;
    if (HOST_KEY.test(message))
      return `the server's host key does not match known_hosts in ${where}: ${message}`;
    const named = `Git authentication failed with the credentials in ${where}`;
    return message.startsWith('Git authentication failed')
      ? message.replace('Git authentication failed', named)
      : `${named}: ${message}`;
  }
  if (!(err instanceof GitRefNotFoundError) && REPOSITORY_NOT_FOUND.test(message)) {
    const url = redactUrl(obj.spec.url);
    // Git hosts answer 404, not 401, for a private repository the credentials may not read.
    return where
      ? `repository not found at ${url}, or the credentials in ${where} may not read it`
      : `repository not found at ${url}`;
  }
  return message;
}

/** Turns a Git failure into FetchFailed and a retry. */
export function gitFailure(run: GitRepositoryRun, err: unknown): never {
  if (err instanceof StalledError || err instanceof RetryableError) throw err;
  const reason = err instanceof GitAuthError ? Reason.AuthenticationFailed : Reason.GitOperationFailed;
  const message = explainGitFailure(run.obj, err);
  markFetchFailed(run.ctx, reason, message);
  throw new RetryableError(reason, message);
}
