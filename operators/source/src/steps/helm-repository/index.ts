import { type Step, step } from '@mooring/runtime';
import type { HelmRepositoryRun } from '../../helm-repository-run.ts';
import { artifactStep, buildStep, keepCurrentArtifact, recordArtifact, verifyStorage } from '../artifact.ts';
import { acceptOciRepository } from './accept-oci.ts';
import { fetchIndex } from './fetch-index.ts';
import { advertiseUrl, packArtifact } from './pack.ts';
import { readCredentials } from './read-credentials.ts';
import { validateSpec } from './validate-spec.ts';

/**
 * A HelmRepository's reconcile; docs/architecture.md lists the same steps. A repository of type
 * oci stops being anything but an address after `accept OCI repository`: the steps after it skip.
 * For type default the index is fetched on every reconcile (its digest is the revision) and stored
 * only when it changed.
 */
export const HELM_REPOSITORY_STEPS: readonly Step<HelmRepositoryRun>[] = [
  step('validate spec', validateSpec),
  step('verify storage', verifyStorage),
  step('read credentials', readCredentials),
  step('accept OCI repository', acceptOciRepository),
  artifactStep('fetch index', fetchIndex),
  artifactStep(
    'keep current artifact',
    keepCurrentArtifact(() => true),
  ),
  buildStep('pack artifact', packArtifact),
  buildStep('record artifact', recordArtifact),
  artifactStep('advertise URL', advertiseUrl),
];
