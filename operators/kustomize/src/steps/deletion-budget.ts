import { APPROVE_PRUNE_ANNOTATION, Reason } from '@mooring/api';
import { RetryableError, StalledError } from '@mooring/runtime';
import { type DeletionBudget, judgePrune, parseDeletionBudget } from '../deletion-budget.ts';
import { inventoryOf, type ObjectRef, refToString } from '../inventory.ts';
import { type KustomizationRun, need } from '../kustomization-run.ts';
import { pruneObjects } from '../prune.ts';

/** What `--default-deletion-budget` is when the operator is built without it (tests, simulation). */
export const DEFAULT_DELETION_BUDGET = '50%';

/** Objects a refusal lists in `status.prunePending`. */
const LISTED_IN_STATUS = 20;

function budgetOf(run: KustomizationRun): DeletionBudget {
  const value = run.obj.spec.deletionBudget ?? run.deps.defaultDeletionBudget ?? DEFAULT_DELETION_BUDGET;
  try {
    return parseDeletionBudget(value);
  } catch (err) {
    throw new StalledError(Reason.InvalidSpec, `spec.deletionBudget: ${(err as Error).message}`);
  }
}

/**
 * Before prune deletes `stale`: within `spec.deletionBudget` (counting only what would really go),
 * or over it with `kustomize.mooring.dev/approvePrune` naming this revision, it returns whether an
 * approval let it through. Otherwise nothing is deleted: the stale objects stay in the inventory,
 * `status.prunePending` lists them and the reconcile ends with PruneBudgetExceeded.
 */
export async function enforceDeletionBudget(
  run: KustomizationRun,
  stale: ObjectRef[],
  applied: ObjectRef[],
): Promise<{ approved: boolean }> {
  const { obj, ctx, status } = run;
  const budget = budgetOf(run);
  const inventorySize = run.previous?.entries.length ?? 0;
  const revision = need(run.source, 'the source').artifact.revision;
  if (stale.length === 0) return { approved: false };
  // An empty render with spec.allowEmpty already says "delete everything" in so many words.
  if (obj.spec.allowEmpty && need(run.rendered, 'the render').manifests.length === 0)
    return { approved: false };
  // Objects already gone, adopted by someone else or marked prune: disabled do not count.
  const doomed = (
    await pruneObjects(need(run.target, 'the target cluster'), stale, run.owner, run.impersonate, {
      dryRun: true,
    })
  ).deleted.map(refToString);
  const verdict = judgePrune({
    doomed,
    inventorySize,
    budget,
    revision,
    approvedRevision: obj.metadata.annotations?.[APPROVE_PRUNE_ANNOTATION],
    approveCommand: `mooring approve prune ks/${run.owner.name} -n ${run.owner.namespace}`,
  });
  if (verdict.allowed) return { approved: verdict.approved };
  // Kept listed, so an approval or a higher budget later still finds them.
  status.inventory = inventoryOf([...applied, ...stale]);
  const before = status.prunePending?.revision;
  status.prunePending = {
    revision,
    count: doomed.length,
    budget: verdict.allowance,
    objects: doomed.slice(0, LISTED_IN_STATUS),
  };
  // The runtime announces a change of Ready's reason; a second refused revision in a row keeps the
  // reason, so it is announced here for Alerts to deliver.
  const ready = ctx.status.conditions?.find((c) => c.type === 'Ready');
  if (ready?.reason === Reason.PruneBudgetExceeded && before !== revision)
    ctx.event('error', Reason.PruneBudgetExceeded, verdict.message, { revision });
  throw new RetryableError(Reason.PruneBudgetExceeded, verdict.message);
}
