import { Reason } from '@mooring/api';
import { parseOciUrl } from '@mooring/oci';
import { StalledError } from '@mooring/runtime';
import type { HelmRepositoryRun } from '../../helm-repository-run.ts';

/** Parses `spec.url` for the repository's type and refuses what Mooring cannot do, before any request. */
export function validateSpec(run: HelmRepositoryRun): undefined {
  const { spec } = run.obj;
  if (spec.type === 'oci') {
    if (spec.provider && spec.provider !== 'generic') {
      throw new StalledError(
        Reason.InvalidProviderConfiguration,
        `provider '${spec.provider}' is not supported yet; use a secretRef`,
      );
    }
    try {
      parseOciUrl(spec.url);
    } catch (err) {
      throw new StalledError(Reason.URLInvalid, (err as Error).message);
    }
    run.url = new URL(spec.url);
    return undefined;
  }
  const url = URL.parse(spec.url);
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new StalledError(
      Reason.URLInvalid,
      `url '${spec.url}' is not an http(s) URL; for OCI set type: oci`,
    );
  }
  if (url.username || url.password) {
    throw new StalledError(
      Reason.URLInvalid,
      'url must not carry credentials; put them in a secretRef Secret',
    );
  }
  run.url = url;
  return undefined;
}
