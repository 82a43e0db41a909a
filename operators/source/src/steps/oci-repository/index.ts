import { type Step, step } from '@mooring/runtime';
import type { OciRepositoryRun } from '../../oci-repository-run.ts';
import { buildStep, keepCurrentArtifact, recordArtifact, verifyStorage } from '../artifact.ts';
import { advertiseUrl, packArtifact, reusePackedLayer } from './pack.ts';
import { pullLayer, selectLayer } from './pull-layer.ts';
import { readCredentials } from './read-credentials.ts';
import { resolveRevision } from './resolve-revision.ts';
import { sameInputs } from './up-to-date.ts';
import { validateSpec } from './validate-spec.ts';

/**
 * An OCIRepository's reconcile, in source-controller's order (storage, source, artifact);
 * docs/architecture.md lists the same steps. The build steps run only when the stored artifact is
 * not up to date.
 */
export const OCI_REPOSITORY_STEPS: readonly Step<OciRepositoryRun>[] = [
  step('validate spec', validateSpec),
  step('verify storage', verifyStorage),
  step('read credentials', readCredentials),
  step('resolve revision', resolveRevision),
  step('keep current artifact', keepCurrentArtifact(sameInputs)),
  buildStep('select layer', selectLayer),
  buildStep('reuse packed layer', reusePackedLayer),
  buildStep('pull layer', pullLayer),
  buildStep('pack artifact', packArtifact),
  buildStep('record artifact', recordArtifact),
  step('advertise URL', advertiseUrl),
];
