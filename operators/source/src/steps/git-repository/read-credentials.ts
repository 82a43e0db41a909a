import { Reason } from '@mooring/api';
import { gitAuthFromSecret, InvalidGitCredentialsError } from '@mooring/git';
import { readSecretData, StalledError } from '@mooring/runtime';
import type { GitRepositoryRun } from '../../git-repository-run.ts';

/** The credentials in `spec.secretRef`, if one is set; a Secret of the wrong shape stalls. */
export async function readCredentials(run: GitRepositoryRun): Promise<undefined> {
  const { obj, storageRef } = run;
  const secret = obj.spec.secretRef?.name;
  if (!secret) return undefined;
  const data = await readSecretData(run.deps.client, storageRef.namespace, secret, 'credentials');
  try {
    run.auth = gitAuthFromSecret(data, obj.spec.url, secret);
  } catch (err) {
    if (err instanceof InvalidGitCredentialsError)
      throw new StalledError(Reason.InvalidProviderConfiguration, err.message);
    throw err;
  }
  return undefined;
}
