import { Reason } from '@mooring/api';
import { StalledError } from '@mooring/runtime';
import { compileHealthExprs } from '../health-exprs.ts';
import type { KustomizationRun } from '../kustomization-run.ts';

/** Refuses what the spec asks and Mooring cannot do, before anything is fetched or applied. */
export function validateSpec(run: KustomizationRun): undefined {
  const { spec } = run.obj;
  try {
    run.healthExprs = spec.healthCheckExprs?.length ? compileHealthExprs(spec.healthCheckExprs) : undefined;
  } catch (err) {
    throw new StalledError(Reason.InvalidCELExpression, (err as Error).message);
  }
  // Not yet supported: refused with a clear condition rather than applied somewhere unexpected.
  if (spec.decryption?.serviceAccountName) {
    throw new StalledError(
      'UnsupportedConfiguration',
      'decryption.serviceAccountName is not supported yet; use secretRef',
    );
  }
  return undefined;
}
