import type { OciRepositoryRun } from '../../oci-repository-run.ts';

/** The stored artifact was built with this layer selector and these ignore rules. */
export function sameInputs(run: OciRepositoryRun): boolean {
  const { obj, status } = run;
  return (
    JSON.stringify(status.observedLayerSelector ?? null) === JSON.stringify(obj.spec.layerSelector ?? null) &&
    (status.observedIgnore ?? null) === (obj.spec.ignore ?? null)
  );
}
