import { Reason } from '@mooring/api';
import { RetryableError } from '@mooring/runtime';
import { type ApplyChange, ApplyError, type KnownVersion } from '../apply/apply-set.ts';
import { applyIgnoreRules } from '../apply/drift-ignore.ts';
import { stageZeroWaiter } from '../apply/stage-zero.ts';
import { impersonationFor } from '../impersonation.ts';
import { fromEntry, inventoryId, inventoryOf, type ObjectRef, refToString } from '../inventory.ts';
import { type KustomizationRun, need } from '../kustomization-run.ts';
import { applyInWaves } from '../waves/apply-in-waves.ts';
import { joinStoredInventory } from './stored-inventory.ts';

/** A one-line summary of what an apply changed, for the event Flux users know ("Deployment/a/b configured"). */
function changeSummary(changes: ApplyChange[]): string {
  return changes
    .filter((c) => c.action !== 'unchanged' && c.action !== 'skipped')
    .map((c) => `${refToString(c.ref)} ${c.action}`)
    .join('\n');
}

/**
 * Server-side apply in waves (waves/apply-in-waves.ts), each in stages, as the Kustomization's
 * service account. Intent before action: what a stage is about to write joins the stored inventory
 * first, so a crash or a failed apply can never leave an object on the cluster that no inventory
 * lists. The stored inventory is read only when needed: the intent is first written on condition
 * that the Kustomization is still at the version this reconcile built on, which proves the stored
 * inventory was the one it started from.
 */
export async function apply(run: KustomizationRun): Promise<undefined> {
  const { obj, ctx, status, deps, memory } = run;
  const target = need(run.target, 'the target cluster');
  const rendered = need(run.rendered, 'the render');
  const revision = need(run.source, 'the source').artifact.revision;
  run.impersonate = impersonationFor(obj, deps.defaultServiceAccount);
  const key = `${obj.metadata.namespace}/${obj.metadata.name}`;
  const known = memory.knownVersions.get(key) ?? new Map<string, KnownVersion>();
  memory.knownVersions.set(key, known);

  const intended = new Map((run.previous?.entries ?? []).map((e) => [e.id, fromEntry(e)]));
  const firstSinceStart = known.size === 0;
  const recordIntent = async (refs: ObjectRef[]) => {
    const fresh = refs.filter((r) => !intended.has(inventoryId(r)));
    if (fresh.length === 0) return;
    for (const r of fresh) intended.set(inventoryId(r), r);
    const message = `applying revision '${revision}': ${refs.length} objects to write`;
    const stored = status.inventory;
    try {
      status.inventory = inventoryOf([...intended.values()]);
      // Written only if the Kustomization is still at the version this reconcile started from:
      // then the stored inventory was `run.previous`, and reading it first would tell nothing new.
      if (!run.storedInventoryJoined && (await ctx.saveProgressIfUnchanged?.(message))) {
        run.storedInventoryJoined = true;
        return;
      }
      for (const e of await joinStoredInventory(run)) intended.set(e.id, fromEntry(e));
      status.inventory = inventoryOf([...intended.values()]);
      await ctx.saveProgress(message);
    } catch (err) {
      // Not written: status.inventory must not claim it was, or the next reconcile, starting
      // from what this one leaves, would apply these objects without recording them first.
      status.inventory = stored;
      throw err;
    }
  };
  let changes: ApplyChange[];
  try {
    changes = await applyInWaves(run, rendered.manifests, {
      beforeApply: recordIntent,
      client: target,
      defaultNamespace: run.owner.namespace,
      impersonate: run.impersonate,
      force: !!obj.spec.force,
      concurrency: deps.concurrentApplies,
      signal: run.signal,
      knownVersions: known,
      mayExist: (ref) => intended.has(inventoryId(ref)),
      versions: deps.managedVersions,
      adjust: obj.spec.ignore?.length
        ? (desired, live) => applyIgnoreRules(desired, live, obj.spec.ignore!)
        : undefined,
      waitForStage0: stageZeroWaiter(target, run.signal),
    });
  } catch (err) {
    if (err instanceof ApplyError) throw new RetryableError(Reason.ReconciliationFailed, err.message);
    throw err;
  }
  // Nothing known of this Kustomization's objects (its first apply, or the first since a restart)
  // and no write has shown the stored inventory to be the cached one: read it before prune and the
  // final status write, which would otherwise drop what only the stored copy lists.
  if (firstSinceStart) await joinStoredInventory(run);
  run.changes = changes;
  run.applied = changes.map((c) => c.ref);
  run.summary = changeSummary(changes);
  if (run.summary) ctx.event('info', 'Progressing', run.summary, { revision });
  return undefined;
}
