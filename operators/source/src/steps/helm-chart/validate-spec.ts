import { Reason } from '@mooring/api';
import { StalledError } from '@mooring/runtime';
import { confined, InvalidChartError } from '../../helm/chart-package.ts';
import { validVersionRange } from '../../helm/index-file.ts';
import type { HelmChartRun } from '../../helm-chart-run.ts';

/** Refuses what the spec asks and Mooring cannot do, before any source is read. */
export function validateSpec(run: HelmChartRun): undefined {
  const { spec } = run.obj;
  if (spec.verify) {
    throw new StalledError(
      Reason.UnsupportedConfiguration,
      `chart signature verification (${spec.verify.provider ?? 'cosign'}) is not supported yet; remove spec.verify`,
    );
  }
  if (spec.sourceRef.kind === 'HelmRepository') {
    if (!/^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(spec.chart)) {
      throw new StalledError(Reason.InvalidSpec, `chart '${spec.chart}' is not a chart name`);
    }
    if (validVersionRange(spec.version) === undefined) {
      throw new StalledError(Reason.InvalidSpec, `version '${spec.version}' is not a SemVer range`);
    }
  } else {
    try {
      confined('/', spec.chart, 'chart path');
      for (const file of spec.valuesFiles ?? []) confined('/', file, 'values file');
    } catch (err) {
      if (err instanceof InvalidChartError) throw new StalledError(Reason.InvalidPath, err.message);
      throw err;
    }
  }
  return undefined;
}
