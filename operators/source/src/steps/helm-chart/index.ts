import { type Step, step } from '@mooring/runtime';
import type { HelmChartRun } from '../../helm-chart-run.ts';
import { buildStep, keepCurrentArtifact, recordArtifact, verifyStorage } from '../artifact.ts';
import { buildChart } from './build-chart.ts';
import { advertiseUrl, packArtifact } from './pack.ts';
import { extractSource, resolveChart } from './resolve-chart.ts';
import { readCredentials, resolveSource } from './resolve-source.ts';
import { sameInputs } from './up-to-date.ts';
import { validateSpec } from './validate-spec.ts';

/**
 * A HelmChart's reconcile; docs/architecture.md lists the same steps. The source's artifact (a
 * HelmRepository's index, a Git or OCI tree) is read from this operator's storage; the chart
 * version it names is the revision, and only a new one is pulled or packaged.
 */
export const HELM_CHART_STEPS: readonly Step<HelmChartRun>[] = [
  step('validate spec', validateSpec),
  step('verify storage', verifyStorage),
  step('resolve source', resolveSource),
  step('read credentials', readCredentials),
  step('extract source', extractSource),
  step('resolve chart', resolveChart),
  step('keep current artifact', keepCurrentArtifact(sameInputs)),
  buildStep('build chart', buildChart),
  buildStep('pack artifact', packArtifact),
  buildStep('record artifact', recordArtifact),
  step('advertise URL', advertiseUrl),
];
