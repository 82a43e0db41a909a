import { rm } from 'node:fs/promises';
import { ConditionType, Reason } from '@mooring/api';
import {
  type ReconcileResult,
  removeCondition,
  runSteps,
  type Step,
  step,
  stepTimer,
} from '@mooring/runtime';
import { markArtifactCurrent, markNewRevision } from '../source-conditions.ts';
import { need, type SourceRun } from '../source-run.ts';

// The steps every source kind shares: the storage check at the start, the up-to-date check, and the
// tail that records a new artifact. A kind's list puts its own steps between them.

/**
 * Storage: the status's artifact stays only if its file is still in storage with the digest it
 * claims; otherwise it is dropped, with ArtifactInStorage False, so this reconcile builds it again.
 */
export async function verifyStorage(run: SourceRun): Promise<undefined> {
  const { status, storage, ctx } = run;
  const artifact = status.artifact;
  if (!artifact || (await storage.verify({ path: artifact.path, digest: artifact.digest ?? '' })))
    return undefined;
  ctx.log.warn({ path: artifact.path }, 'artifact missing or corrupt in storage; rebuilding');
  ctx.setCondition(ConditionType.ArtifactInStorage, 'False', Reason.Progressing, 'artifact not in storage');
  status.artifact = undefined;
  return undefined;
}

/**
 * The up-to-date check: when the stored artifact holds the resolved revision and `sameInputs`
 * says the rest of what it was built from has not changed, it is kept (only its advertised URL
 * may move, when `--storage-adv-addr` did) and the build steps are skipped. Otherwise
 * ArtifactOutdated says which revision is being built.
 */
export function keepCurrentArtifact<R extends SourceRun>(sameInputs: (run: R) => boolean) {
  return (run: R): undefined => {
    const { status, ctx } = run;
    const revision = need(run.revision, 'the upstream revision');
    const current = status.artifact;
    if (current?.revision !== revision || !sameInputs(run)) {
      markNewRevision(ctx, current?.revision, revision);
      return undefined;
    }
    const url = run.storage.urlFor(current.path);
    if (current.url !== url) status.artifact = { ...current, url };
    markArtifactCurrent(ctx, revision);
    run.upToDate = true;
    return undefined;
  };
}

/** A step of the build: skipped when the stored artifact is up to date. */
export function buildStep<R extends SourceRun>(name: string, run: Step<R>['run']): Step<R> {
  return step(name, (r) => (r.upToDate || r.noArtifact !== undefined ? undefined : run(r)));
}

/** A step of a kind that may store no artifact (an OCI HelmRepository): skipped then. */
export function artifactStep<R extends SourceRun>(name: string, run: Step<R>['run']): Step<R> {
  return step(name, (r) => (r.noArtifact !== undefined ? undefined : run(r)));
}

/**
 * The tail both kinds share: the packed artifact becomes the status's, with what it was built
 * from; storage failures are cleared, the artifact is current, a NewArtifact event tells the
 * revision and digest, and older artifacts beyond the retention are collected.
 */
export async function recordArtifact(run: SourceRun): Promise<undefined> {
  const { status, ctx } = run;
  const { artifact, observed, event } = need(run.packed, 'the packed artifact');
  status.artifact = artifact;
  Object.assign(status, observed);
  ctx.status.conditions = removeCondition(ctx.status.conditions, ConditionType.StorageOperationFailed);
  markArtifactCurrent(ctx, artifact.revision);
  ctx.event('info', 'NewArtifact', event, { revision: artifact.revision, digest: artifact.digest ?? '' });
  const removed = await run.storage.gc(run.storageRef, artifact);
  if (removed.length) ctx.log.debug({ removed }, 'garbage-collected old artifacts');
  return undefined;
}

/** Runs a kind's steps over `run`, removes the scratch folder, and reports the stored revision. */
export async function reconcileSource<R extends SourceRun>(
  steps: readonly Step<R>[],
  run: R,
): Promise<ReconcileResult> {
  try {
    await runSteps(
      steps,
      run,
      (name) => run.ctx.log.debug({ step: name }, 'step'),
      stepTimer(run.ctx.metrics, run.storageRef.kind),
    );
  } finally {
    if (run.scratch) await rm(run.scratch, { recursive: true, force: true });
  }
  if (run.noArtifact !== undefined) return { message: run.noArtifact };
  const { revision } = need(run.status.artifact, 'the artifact');
  // A new artifact was told of by its NewArtifact event; Ready then needs no event of its own.
  return {
    message: `stored artifact for revision '${revision}'`,
    revision,
    ...(run.packed !== undefined && { announced: true }),
  };
}
