import {
  DEPENDENCY_KINDS,
  FINALIZER,
  HELM_API_VERSION,
  KUSTOMIZE_API_VERSION,
  type Kustomization,
  kindApiVersion,
  Reason,
  type ResourceInventory,
  SOURCE_KINDS,
} from '@mooring/api';
import {
  type KubeObject,
  type ReconcileContext,
  type ReconcileResult,
  type Reconciler,
  RetryableError,
  runSteps,
  stepTimer,
  WaitingError,
} from '@mooring/runtime';
import { type DependencyNode, dependentsOf } from './dependencies.ts';
import { wakeOwnersOnDrift } from './drift-wake.ts';
import { impersonationFor } from './impersonation.ts';
import { fromEntry, refToString } from './inventory.ts';
import type { KustomizationDeps, KustomizationMemory, KustomizationRun } from './kustomization-run.ts';
import { pruneObjects, waitForTermination } from './prune.ts';
import { RemoteClusters } from './remote-cluster.ts';
import { sourceKey } from './source-ref.ts';
import { KUSTOMIZATION_STEPS } from './steps/index.ts';
import { RunsInFlight, Superseded } from './superseded.ts';
import { kustomizationTimings } from './timeouts.ts';

export { impersonationFor } from './impersonation.ts';
export type { KustomizationDeps } from './kustomization-run.ts';

const keyOf = (o: { metadata: { namespace?: string; name?: string } }) =>
  `${o.metadata.namespace}/${o.metadata.name}`;

/**
 * A reconcile given up for a newer revision or generation: Ready is not True and says what
 * superseded what; the key is already enqueued again by the watch that saw the news.
 */
function supersededError(run: KustomizationRun, step: string, newer: Superseded): WaitingError {
  const revision = run.source?.artifact.revision;
  const of = revision ? `revision '${revision}'` : `generation ${run.obj.metadata.generation}`;
  return new WaitingError(
    Reason.Superseded,
    `${of} superseded by ${newer.message} during '${step}': reconciling that now`,
    1_000,
  );
}

/**
 * The Kustomization reconciler: its reconcile is the list of steps in ./steps (source,
 * dependencies, render, apply in stages, prune, health, record); status carries the inventory,
 * revisions and history. Finalize prunes what the inventory lists, per the deletion policy.
 */
export function kustomizationReconciler(deps: KustomizationDeps): Reconciler<Kustomization> {
  const { client } = deps;
  const memory: KustomizationMemory = {
    knownVersions: new Map(),
    healthy: new Map(),
    remotes: new RemoteClusters(),
    lastInventory: new Map(),
  };
  const { remotes, knownVersions } = memory;
  const inFlight = new RunsInFlight();

  /**
   * The inventory to start from: the cached object's, plus what this process last wrote for it.
   * The informer's copy can lag behind our own status writes (a stalled watch), and starting from
   * it alone would drop objects applied in between from the inventory for good.
   */
  const inventorySeen = (obj: Kustomization, building?: ResourceInventory): ResourceInventory | undefined => {
    const cached = obj.status?.inventory;
    const written = [memory.lastInventory.get(keyOf(obj)), building].filter((i) => i !== undefined);
    if (!written.length) return cached;
    const ids = new Map((cached?.entries ?? []).map((e) => [e.id, e]));
    for (const inventory of written) for (const e of inventory.entries) if (!ids.has(e.id)) ids.set(e.id, e);
    return { entries: [...ids.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)) };
  };

  async function reconcile(obj: Kustomization, ctx: ReconcileContext): Promise<ReconcileResult> {
    const status = ctx.status as NonNullable<Kustomization['status']>;
    const timings = kustomizationTimings(obj);
    const current = inFlight.begin(keyOf(obj), {
      generation: obj.metadata.generation,
      // Read when the watch reports news, after `run` is set (no event runs in between).
      revision: () => run.source?.artifact.revision,
    });
    const run: KustomizationRun = {
      obj,
      ctx,
      status,
      deps,
      memory,
      started: performance.now(),
      timings,
      owner: { name: obj.metadata.name ?? '', namespace: obj.metadata.namespace ?? 'default' },
      signal: AbortSignal.any([ctx.deadline(timings.timeoutMs), current.signal]),
      // The status this reconcile builds on too: a write conditional on its version (the inventory
      // intent) trusts that `previous` lists everything it does.
      previous: inventorySeen(obj, status.inventory),
    };
    let outcome: Awaited<ReturnType<typeof runSteps>>;
    let step = '';
    try {
      outcome = await runSteps(
        KUSTOMIZATION_STEPS,
        run,
        (name) => {
          step = name;
          ctx.log.debug({ step: name }, 'step');
        },
        stepTimer(ctx.metrics, 'Kustomization'),
      );
    } catch (err) {
      const newer = current.signal.reason;
      if (newer instanceof Superseded) throw supersededError(run, step, newer);
      throw err;
    } finally {
      current.end();
      // What this reconcile leaves in status.inventory is what the status write will hold.
      if (status.inventory) memory.lastInventory.set(keyOf(obj), status.inventory);
    }
    const revision = run.source!.artifact.revision;
    return { message: `Applied revision: ${revision}`, revision, requeueAfterMs: outcome.requeueAfterMs };
  }

  return {
    apiVersion: KUSTOMIZE_API_VERSION,
    kind: 'Kustomization',
    finalizer: FINALIZER,
    defaultIntervalMs: 600_000,
    reconcile,

    async finalize(obj, ctx) {
      knownVersions.delete(keyOf(obj));
      memory.healthy.delete(keyOf(obj));
      const policy = obj.spec.deletionPolicy ?? 'MirrorPrune';
      // The hook objects the last revision left go too: hooks are not in the inventory.
      const entries = [
        ...(inventorySeen(obj)?.entries ?? []),
        ...(obj.status?.hooks?.objects?.entries ?? []),
      ];
      memory.lastInventory.delete(keyOf(obj));
      if (obj.spec.suspend || entries.length === 0 || policy === 'Orphan') return;
      if (policy === 'MirrorPrune' && !obj.spec.prune) return;
      const owner = { name: obj.metadata.name ?? '', namespace: obj.metadata.namespace ?? 'default' };
      const impersonate = impersonationFor(obj, deps.defaultServiceAccount);
      const refs = entries.map(fromEntry);
      let target = client;
      if (obj.spec.kubeConfig) {
        try {
          target = (await remotes.clientFor(client, obj)) ?? client;
        } catch (err) {
          // Never this cluster in its place: the same names here are someone else's objects.
          ctx.log.warn(
            { err: (err as Error).message },
            'remote cluster unreachable; its objects are left as they are',
          );
          ctx.event(
            'error',
            'PruneFailed',
            `objects on the remote cluster were not deleted: ${(err as Error).message}`,
          );
          return;
        }
      }
      const result = await pruneObjects(target, refs, owner, impersonate);
      remotes.forget(keyOf(obj));
      if (result.failed.length) {
        // The finalizer stays and the runtime retries, as Flux does: giving up would orphan them.
        throw new RetryableError(
          Reason.PruneFailed,
          `could not delete every object: ${result.failed.map((f) => f.message).join('; ')}`,
        );
      }
      if (policy === 'WaitForTermination') {
        const left = await waitForTermination(
          target,
          result.deleted,
          kustomizationTimings(obj).timeoutMs,
          impersonate,
        );
        if (left.length)
          ctx.log.warn({ left: left.map(refToString) }, 'objects still terminating after the timeout');
      }
    },

    connect(queue) {
      if (deps.managedVersions) wakeOwnersOnDrift(deps.managedVersions, knownVersions, queue);
    },

    watches: [
      // A new generation ends a health wait of an older one in flight (the key is enqueued anyway).
      {
        apiVersion: KUSTOMIZE_API_VERSION,
        kind: 'Kustomization',
        enqueue(changed: KubeObject, old: KubeObject | undefined): string[] {
          const generation = changed.metadata.generation;
          if (old && generation !== undefined && generation !== old.metadata.generation)
            inFlight.supersede(keyOf(changed), { generation });
          return [];
        },
      },
      // A Kustomization reconciles again when the artifact of the source it reads changes, and a
      // reconcile of another revision in flight is given up for it.
      ...SOURCE_KINDS.map((kind) => ({
        apiVersion: kindApiVersion(kind),
        kind,
        enqueue(
          changed: KubeObject,
          old: KubeObject | undefined,
          objects: readonly Kustomization[],
        ): string[] {
          const rev = (o: KubeObject | undefined) =>
            (o as { status?: { artifact?: { revision?: string } } } | undefined)?.status?.artifact?.revision;
          if (old && rev(old) === rev(changed)) return [];
          const keys = objects
            .filter((k) => {
              const s = sourceKey(k);
              return (
                s.kind === kind &&
                s.name === changed.metadata.name &&
                s.namespace === changed.metadata.namespace
              );
            })
            .map(keyOf);
          const revision = rev(changed);
          if (revision) for (const key of keys) inFlight.supersede(key, { revision });
          return keys;
        },
      })),
      // A dependency of either kind turning Ready (or applying a new revision) requeues its dependents.
      ...DEPENDENCY_KINDS.map((kind) => ({
        apiVersion: kind === 'Kustomization' ? KUSTOMIZE_API_VERSION : HELM_API_VERSION,
        kind,
        enqueue(
          changed: KubeObject,
          old: KubeObject | undefined,
          objects: readonly Kustomization[],
        ): string[] {
          const summary = (o: KubeObject | undefined) => {
            const st = (o as Kustomization | undefined)?.status;
            const ready = st?.conditions?.find((c) => c.type === 'Ready');
            return `${ready?.status}/${st?.lastAppliedRevision}`;
          };
          if (old && summary(old) === summary(changed)) return [];
          return dependentsOf(kind, changed, objects as readonly DependencyNode[], 'Kustomization');
        },
      })),
    ],
  };
}
