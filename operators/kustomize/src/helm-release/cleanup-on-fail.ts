// `spec.upgrade.cleanupOnFail` (Flux's, helm upgrade --cleanup-on-fail): a failed upgrade deletes
// the objects it added to the release, those the inventory lists now and did not list when the
// reconcile started, before any remediation. Objects it changed stay as they are, as in Helm; only
// objects carrying this HelmRelease's owner labels are deleted (prune's rule).
import { inventoryId, refToString } from '../inventory.ts';
import { type HelmReleaseRun, need } from './helm-release-run.ts';
import { deleteReleaseObjects } from './uninstall.ts';

export async function cleanupFailedUpgrade(run: HelmReleaseRun): Promise<void> {
  const { obj, ctx, status } = run;
  const before = new Set((obj.status?.inventory?.entries ?? []).map((e) => e.id));
  const created = (status.inventory?.entries ?? []).filter((e) => !before.has(e.id));
  if (created.length === 0) return;
  const result = await deleteReleaseObjects(
    obj,
    need(run.target, 'the target cluster'),
    { entries: created },
    run.impersonate,
  );
  // What could not be deleted stays listed, so a later prune retries it.
  const kept = new Set(result.failed.map((f) => inventoryId(f.ref)));
  const gone = new Set(created.map((e) => e.id).filter((id) => !kept.has(id)));
  status.inventory = { entries: (status.inventory?.entries ?? []).filter((e) => !gone.has(e.id)) };
  if (result.deleted.length)
    ctx.event(
      'info',
      'Progressing',
      `cleanupOnFail: ${result.deleted.map((r) => `${refToString(r)} deleted`).join('\n')}`,
    );
  if (result.failed.length)
    ctx.event(
      'error',
      'Progressing',
      `cleanupOnFail could not delete: ${result.failed.map((f) => f.message).join('; ')}`,
    );
}
