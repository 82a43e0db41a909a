import { type Step, step } from '@mooring/runtime';
import type { GitRepositoryRun } from '../../git-repository-run.ts';
import { buildStep, keepCurrentArtifact, recordArtifact, verifyStorage } from '../artifact.ts';
import { checkOut } from './check-out.ts';
import { copyIncludes, resolveIncludes } from './includes.ts';
import { packArtifact } from './pack.ts';
import { readCredentials } from './read-credentials.ts';
import { resolveRevision } from './resolve-revision.ts';
import { sameInputs } from './up-to-date.ts';
import { validateSpec } from './validate-spec.ts';
import { verifySignature } from './verify-signature.ts';

/**
 * A GitRepository's reconcile, in source-controller's order (storage, source, include, artifact);
 * docs/architecture.md lists the same steps. The build steps run only when the stored artifact is
 * not up to date.
 */
export const GIT_REPOSITORY_STEPS: readonly Step<GitRepositoryRun>[] = [
  step('validate spec', validateSpec),
  step('verify storage', verifyStorage),
  step('read credentials', readCredentials),
  step('resolve revision', resolveRevision),
  step('resolve includes', resolveIncludes),
  step('keep current artifact', keepCurrentArtifact(sameInputs)),
  buildStep('check out', checkOut),
  buildStep('verify signature', verifySignature),
  buildStep('copy includes', copyIncludes),
  buildStep('pack artifact', packArtifact),
  buildStep('record artifact', recordArtifact),
];
