import { Reason } from '@mooring/api';
import { parseOciUrl } from '@mooring/oci';
import { StalledError } from '@mooring/runtime';
import type { OciRepositoryRun } from '../../oci-repository-run.ts';

/** Refuses what the spec asks and Mooring cannot do, and parses `spec.url`, before anything is pulled. */
export function validateSpec(run: OciRepositoryRun): undefined {
  const { spec } = run.obj;
  if (spec.provider && spec.provider !== 'generic') {
    throw new StalledError(
      Reason.InvalidProviderConfiguration,
      `provider '${spec.provider}' is not supported yet; use a dockerconfigjson secretRef`,
    );
  }
  if (spec.verify) {
    throw new StalledError(
      Reason.VerificationError,
      'OCI signature verification (cosign, notation) is not supported yet',
    );
  }
  try {
    run.target = parseOciUrl(spec.url);
  } catch (err) {
    throw new StalledError(Reason.URLInvalid, (err as Error).message);
  }
  return undefined;
}
