import { ConditionType } from '@mooring/api';
import { removeCondition } from '@mooring/runtime';
import type { HelmRepositoryRun } from '../../helm-repository-run.ts';

/**
 * A repository of type oci is an address and credentials HelmCharts pull from, as in Flux: no
 * index, no artifact. Its URL and Secret were checked; it is Ready, and an artifact from when it
 * was of type default goes.
 */
export function acceptOciRepository(run: HelmRepositoryRun): undefined {
  if (run.obj.spec.type !== 'oci') return undefined;
  const { status, ctx } = run;
  status.artifact = undefined;
  status.url = undefined;
  for (const type of [
    ConditionType.ArtifactInStorage,
    ConditionType.ArtifactOutdated,
    ConditionType.FetchFailed,
  ]) {
    ctx.status.conditions = removeCondition(ctx.status.conditions, type);
  }
  run.noArtifact = 'Helm repository is ready';
  return undefined;
}
