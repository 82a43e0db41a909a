import { type Step, step } from '@mooring/runtime';
import type { HelmReleaseRun } from '../helm-release-run.ts';
import { correctDrift } from './correct-drift.ts';
import { decideReleaseAction } from './decide-action.ts';
import { checkDependencies, composeReleaseValues, resolveChart, validateSpec } from './prepare.ts';
import { preserveValues } from './preserve-values.ts';
import { readHistory } from './read-history.ts';
import { recordStatus } from './record-status.ts';
import { release, render } from './release.ts';
import { rollbackRequest } from './rollback-request.ts';

/** A HelmRelease's reconcile, in order; docs/architecture.md lists the same steps. */
export const HELM_RELEASE_STEPS: readonly Step<HelmReleaseRun>[] = [
  step('validate spec', validateSpec),
  step('resolve chart', resolveChart),
  step('check dependencies', checkDependencies),
  step('compose values', composeReleaseValues),
  step('read release history', readHistory),
  step('preserve values', preserveValues),
  step('decide action', decideReleaseAction),
  step('rollback request', rollbackRequest),
  step('render', render),
  step('install or upgrade', release),
  step('correct drift', correctDrift),
  step('record status', recordStatus),
];
