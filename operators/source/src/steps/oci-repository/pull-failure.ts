import { Reason } from '@mooring/api';
import { RegistryAuthError } from '@mooring/oci';
import { RetryableError, StalledError } from '@mooring/runtime';
import type { OciRepositoryRun } from '../../oci-repository-run.ts';
import { markFetchFailed } from '../../source-conditions.ts';

/** Turns a registry failure into FetchFailed and a retry. */
export function pullFailure(run: OciRepositoryRun, err: unknown): never {
  if (err instanceof StalledError || err instanceof RetryableError) throw err;
  const message = (err as Error).message;
  const reason =
    err instanceof RegistryAuthError ? Reason.AuthenticationFailed : Reason.OCIArtifactPullFailed;
  markFetchFailed(run.ctx, reason, message);
  throw new RetryableError(reason, message);
}
