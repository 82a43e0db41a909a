import { type Step, step } from '@mooring/runtime';
import type { OciRepositoryRun } from '../../oci-repository-run.ts';
import { buildStep, keepCurrentArtifact, recordArtifact, verifyStorage } from '../artifact.ts';
import { advertiseUrl, packArtifact, reusePackedLayer } from './pack.ts';
import { pullLayer, selectLayer } from './pull-layer.ts';
import { readCredentials } from './read-credentials.ts';
import { resolveRevision } from './resolve-revision.ts';
import { sameInputs } from './up-to-date.ts';
import { validateSpec } from './validate-spec.ts';

/** A build step skipped when reusePackedLayer already copied an artifact of this layer. */
const unlessReused =
  (run: (r: OciRepositoryRun) => Promise<undefined>) =>
  (r: OciRepositoryRun): Promise<undefined> | undefined =>
    r.packed ? undefined : run(r);

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
  buildStep('pull layer', unlessReused(pullLayer)),
  buildStep('pack artifact', unlessReused(packArtifact)),
  buildStep('record artifact', recordArtifact),
  step('advertise URL', advertiseUrl),
];
