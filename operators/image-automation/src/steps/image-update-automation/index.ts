import { type Step, step } from '@mooring/runtime';
import type { ImageUpdateAutomationRun } from '../../image-update-automation-run.ts';
import { readSigningKey } from './read-signing-key.ts';
import { recordRun } from './record-run.ts';
import { chooseBranches, readCredentials, resolveSource } from './resolve-source.ts';
import { selectPolicies } from './select-policies.ts';
import { updateBranch } from './update-branch.ts';
import { validateSpec } from './validate-spec.ts';

export { PUSH_ATTEMPT_STEPS } from './update-branch.ts';

/**
 * An ImageUpdateAutomation's reconcile; docs/architecture.md lists the same steps, and those of
 * one attempt at updating the branch (PUSH_ATTEMPT_STEPS).
 */
export const IMAGE_UPDATE_AUTOMATION_STEPS: readonly Step<ImageUpdateAutomationRun>[] = [
  step('validate spec', validateSpec),
  step('resolve source', resolveSource),
  step('read credentials', readCredentials),
  step('choose branches', chooseBranches),
  step('read signing key', readSigningKey),
  step('select policies', selectPolicies),
  step('update branch', updateBranch),
  step('record run', recordRun),
];
