// `spec.upgrade.preserveValues` (Flux's, helm upgrade --reuse-values): an upgrade keeps the values
// of the release it replaces and merges the HelmRelease's over them, so a value set on the release
// before (by helm, or by an earlier spec) survives until the spec sets it again. The configDigest
// is of the merged values: the same spec over the same release is nothing new.
import { type HelmReleaseRun, need } from '../helm-release-run.ts';
import { configDigest, mergeValues } from '../values.ts';

export async function preserveValues(run: HelmReleaseRun): Promise<undefined> {
  const deployed = run.deployed;
  if (!run.obj.spec.upgrade?.preserveValues || !deployed?.config) return undefined;
  run.values = mergeValues(deployed.config, need(run.values, 'the values'));
  run.configDigest = configDigest(run.values);
  return undefined;
}
