import type { HelmChartRun } from '../../helm-chart-run.ts';

/** The stored chart is the same chart, built with the same values files. */
export function sameInputs(run: HelmChartRun): boolean {
  const { obj, status } = run;
  return (
    status.observedChartName === run.chart?.name &&
    JSON.stringify(status.observedValuesFiles ?? []) === JSON.stringify(obj.spec.valuesFiles ?? [])
  );
}
