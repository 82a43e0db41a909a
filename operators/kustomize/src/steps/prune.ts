import { Reason } from '@mooring/api';
import { RetryableError } from '@mooring/runtime';
import { inventoryOf, refToString, staleEntries } from '../inventory.ts';
import { type KustomizationRun, need } from '../kustomization-run.ts';
import { pruneObjects } from '../prune.ts';
import { enforceDeletionBudget } from './deletion-budget.ts';
import { joinStoredInventory } from './stored-inventory.ts';

/** With `prune`, deletes what the previous inventory lists and this revision no longer declares. */
export async function prune(run: KustomizationRun): Promise<undefined> {
  const { obj, ctx, status } = run;
  const applied = need(run.applied, 'the applied objects');
  const inventory = inventoryOf(applied);
  const unchanged =
    JSON.stringify(inventory.entries.map((e) => e.id)) ===
    JSON.stringify((run.previous?.entries ?? []).map((e) => e.id));
  if (!unchanged) await joinStoredInventory(run);
  if (obj.spec.prune) {
    const revision = need(run.source, 'the source').artifact.revision;
    const stale = staleEntries(run.previous, inventory);
    const { approved } = await enforceDeletionBudget(run, stale, applied);
    const pruned = await pruneObjects(
      need(run.target, 'the target cluster'),
      stale,
      run.owner,
      run.impersonate,
    );
    if (pruned.deleted.length) {
      ctx.event('info', 'Progressing', pruned.deleted.map((r) => `${refToString(r)} deleted`).join('\n'), {
        revision,
      });
    }
    if (pruned.failed.length) {
      // Keep what could not be deleted in the inventory, so the next run tries again.
      status.inventory = inventoryOf([...applied, ...pruned.failed.map((f) => f.ref)]);
      throw new RetryableError(
        Reason.PruneFailed,
        `prune failed: ${pruned.failed.map((f) => f.message).join('; ')}`,
      );
    }
    if (approved) status.lastHandledPruneApproval = revision;
  }
  delete status.prunePending;
  status.inventory = inventory;
  return undefined;
}
