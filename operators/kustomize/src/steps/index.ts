import { type Step, step } from '@mooring/runtime';
import type { KustomizationRun } from '../kustomization-run.ts';
import { apply } from './apply.ts';
import { checkDependencies } from './check-dependencies.ts';
import { checkHealth } from './health.ts';
import { planWavesAndHooks, runPostApplyHooks, runPreApplyHooks, withFailureHooks } from './hooks.ts';
import { prune } from './prune.ts';
import { recordSuccess } from './record-success.ts';
import { refuseEmptyRender, render } from './render.ts';
import { resolveSource } from './resolve-source.ts';
import { timePush } from './time-push.ts';
import { validateSpec } from './validate-spec.ts';

/** A Kustomization's reconcile, in Flux's order; docs/architecture.md lists the same steps. */
export const KUSTOMIZATION_STEPS: readonly Step<KustomizationRun>[] = [
  step('validate spec', validateSpec),
  step('resolve source', resolveSource),
  step('check dependencies', checkDependencies),
  step('render', render),
  step('refuse empty render', refuseEmptyRender),
  step('plan waves and hooks', planWavesAndHooks),
  step('run pre-apply hooks', withFailureHooks(runPreApplyHooks)),
  step('apply', withFailureHooks(apply)),
  step('prune', prune),
  step('check health', withFailureHooks(checkHealth)),
  step('run post-apply hooks', withFailureHooks(runPostApplyHooks)),
  step('time push to applied', timePush),
  step('record success', recordSuccess),
];
