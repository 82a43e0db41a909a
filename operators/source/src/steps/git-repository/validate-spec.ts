import { Reason } from '@mooring/api';
import { StalledError } from '@mooring/runtime';
import type { GitRepositoryRun } from '../../git-repository-run.ts';

/** Refuses what the spec asks and Mooring cannot do, before anything is fetched. */
export function validateSpec(run: GitRepositoryRun): undefined {
  const { spec } = run.obj;
  if (spec.provider && spec.provider !== 'generic') {
    throw new StalledError(
      Reason.InvalidProviderConfiguration,
      `provider '${spec.provider}' is not supported yet; use secretRef credentials`,
    );
  }
  // Said plainly rather than ignored: an artifact without the submodules would apply the wrong thing.
  if (spec.recurseSubmodules) {
    throw new StalledError('UnsupportedConfiguration', 'recurseSubmodules is not supported yet');
  }
  if (spec.proxySecretRef) {
    throw new StalledError('UnsupportedConfiguration', 'proxySecretRef is not supported yet');
  }
  return undefined;
}
