import { ConditionType, Reason } from '@mooring/api';
import { type ReconcileContext, removeCondition } from '@mooring/runtime';

/** Records a failed fetch on the object: FetchFailed True with the reason; Ready follows from the thrown error. */
export function markFetchFailed(ctx: ReconcileContext, reason: string, message: string): void {
  ctx.setCondition(ConditionType.FetchFailed, 'True', reason, message);
}

/** Clears the negative conditions once an artifact for the wanted revision is in storage. */
export function markArtifactCurrent(ctx: ReconcileContext, revision: string): void {
  for (const type of [
    ConditionType.FetchFailed,
    ConditionType.ArtifactOutdated,
    ConditionType.IncludeUnavailable,
  ]) {
    ctx.status.conditions = removeCondition(ctx.status.conditions, type);
  }
  ctx.setCondition(
    ConditionType.ArtifactInStorage,
    'True',
    Reason.Succeeded,
    `stored artifact for revision '${revision}'`,
  );
}

/** A new upstream revision is being fetched: ArtifactOutdated True until it is stored. */
export function markNewRevision(ctx: ReconcileContext, from: string | undefined, to: string): void {
  ctx.setCondition(
    ConditionType.ArtifactOutdated,
    'True',
    Reason.NewRevision,
    from
      ? `new upstream revision '${to}' (was '${from}')`
      : `building artifact: new upstream revision '${to}'`,
  );
}
