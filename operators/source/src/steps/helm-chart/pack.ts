import type { HelmChartRun } from '../../helm-chart-run.ts';
import { need } from '../../source-run.ts';

/** The chart package stored as it is: the artifact is the `.tgz` Helm installs. */
export async function packArtifact(run: HelmChartRun): Promise<undefined> {
  const file = need(run.packageFile, 'the chart package');
  const chart = need(run.chart, 'the chart');
  const source = need(run.source, 'the source');
  const revision = need(run.revision, 'the revision');
  const stored = await run.storage.storeFile(run.storageRef, file);
  run.packed = {
    artifact: { ...stored, revision },
    observed: {
      observedChartName: chart.name,
      observedSourceArtifactRevision: source.artifact.revision,
      observedValuesFiles: run.obj.spec.valuesFiles?.length ? run.status.observedValuesFiles : undefined,
    },
    event:
      run.made === 'pulled'
        ? `pulled '${chart.name}' chart with version '${revision}'`
        : `packaged '${chart.name}' chart with version '${revision}'`,
  };
  return undefined;
}

/** `status.url`: where the current chart package is downloaded. */
export function advertiseUrl(run: HelmChartRun): undefined {
  run.status.url = need(run.status.artifact, 'the artifact').url;
  return undefined;
}
