import type { ImageRepository } from '@mooring/api';
import { StalledError } from '@mooring/runtime';
import { DEFAULT_EXCLUSION_LIST, type ImageRepositoryRun } from '../../image-repository-run.ts';
import { compilePattern, InvalidPolicyError } from '../../policy.ts';
import { imageRefOf } from '../../run.ts';

function exclusionsOf(repo: ImageRepository): RegExp[] {
  const list = repo.spec.exclusionList ?? DEFAULT_EXCLUSION_LIST;
  try {
    return list.map((p) => compilePattern(p, 'exclusionList entry'));
  } catch (err) {
    if (err instanceof InvalidPolicyError) throw new StalledError('InvalidExclusionList', err.message);
    throw err;
  }
}

/**
 * Refuses what the spec asks and Mooring cannot do, and reads the image reference and the
 * exclusion patterns: each failure is Stalled, as a spec will not fix itself.
 */
export function validateSpec(run: ImageRepositoryRun): undefined {
  const { spec } = run.obj;
  if (spec.provider && spec.provider !== 'generic') {
    throw new StalledError(
      'InvalidProviderConfiguration',
      `provider '${spec.provider}' is not supported yet; use a secretRef with registry credentials`,
    );
  }
  if (spec.proxySecretRef || spec.serviceAccountName) {
    throw new StalledError(
      'UnsupportedConfiguration',
      'proxySecretRef and serviceAccountName are not supported yet; use secretRef',
    );
  }
  const ref = imageRefOf(run.obj);
  run.ref = ref;
  run.canonical = `${ref.host}/${ref.repository}`;
  run.exclusions = exclusionsOf(run.obj);
  return undefined;
}
