import { FINALIZER, KUSTOMIZE_API_VERSION, type Kustomization, SOURCE_API_VERSION } from '@mooring/api';
import {
  type KubeObject,
  type ReconcileContext,
  type ReconcileResult,
  type Reconciler,
  runSteps,
  timeoutSignal,
} from '@mooring/runtime';
import { impersonationFor } from './impersonation.ts';
import { fromEntry, refToString } from './inventory.ts';
import type { KustomizationDeps, KustomizationMemory, KustomizationRun } from './kustomization-run.ts';
import { pruneObjects, waitForTermination } from './prune.ts';
import { RemoteClusters } from './remote-cluster.ts';
import { sourceKey } from './source-ref.ts';
import { KUSTOMIZATION_STEPS } from './steps/index.ts';
import { kustomizationTimings } from './timeouts.ts';

export { impersonationFor } from './impersonation.ts';
export type { KustomizationDeps } from './kustomization-run.ts';

const keyOf = (o: { metadata: { namespace?: string; name?: string } }) =>
  `${o.metadata.namespace}/${o.metadata.name}`;

/**
 * The Kustomization reconciler: its reconcile is the list of steps in ./steps (source,
 * dependencies, render, apply in stages, prune, health, record); status carries the inventory,
 * revisions and history. Finalize prunes what the inventory lists, per the deletion policy.
 */
export function kustomizationReconciler(deps: KustomizationDeps): Reconciler<Kustomization> {
  const { client } = deps;
  const memory: KustomizationMemory = { knownVersions: new Map(), remotes: new RemoteClusters() };
  const { remotes, knownVersions } = memory;

  async function reconcile(obj: Kustomization, ctx: ReconcileContext): Promise<ReconcileResult> {
    const status = ctx.status as NonNullable<Kustomization['status']>;
    const timings = kustomizationTimings(obj);
    const run: KustomizationRun = {
      obj,
      ctx,
      status,
      deps,
      memory,
      started: Date.now(),
      timings,
      owner: { name: obj.metadata.name ?? '', namespace: obj.metadata.namespace ?? 'default' },
      signal: AbortSignal.any([ctx.signal, timeoutSignal(timings.timeoutMs)]),
      previous: status.inventory,
    };
    const outcome = await runSteps(KUSTOMIZATION_STEPS, run, (name) => ctx.log.debug({ step: name }, 'step'));
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
      const policy = obj.spec.deletionPolicy ?? 'MirrorPrune';
      const entries = obj.status?.inventory?.entries ?? [];
      if (obj.spec.suspend || entries.length === 0 || policy === 'Orphan') return;
      if (policy === 'MirrorPrune' && !obj.spec.prune) return;
      const owner = { name: obj.metadata.name ?? '', namespace: obj.metadata.namespace ?? 'default' };
      const impersonate = impersonationFor(obj, deps.defaultServiceAccount);
      const refs = entries.map(fromEntry);
      const target = (await remotes.clientFor(client, obj).catch(() => undefined)) ?? client;
      remotes.forget(keyOf(obj));
      const result = await pruneObjects(target, refs, owner, impersonate);
      if (result.failed.length)
        ctx.log.warn({ failed: result.failed.map((f) => f.message) }, 'could not delete every object');
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

    watches: [
      ...(['GitRepository', 'OCIRepository'] as const).map((kind) => ({
        apiVersion: SOURCE_API_VERSION,
        kind,
        enqueue(
          changed: KubeObject,
          old: KubeObject | undefined,
          objects: readonly Kustomization[],
        ): string[] {
          const rev = (o: KubeObject | undefined) =>
            (o as { status?: { artifact?: { revision?: string } } } | undefined)?.status?.artifact?.revision;
          if (old && rev(old) === rev(changed)) return [];
          return objects
            .filter((k) => {
              const s = sourceKey(k);
              return (
                s.kind === kind &&
                s.name === changed.metadata.name &&
                s.namespace === changed.metadata.namespace
              );
            })
            .map(keyOf);
        },
      })),
      {
        apiVersion: KUSTOMIZE_API_VERSION,
        kind: 'Kustomization',
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
          const key = keyOf(changed);
          return objects
            .filter((k) =>
              (k.spec.dependsOn ?? []).some(
                (d) => `${d.namespace ?? k.metadata.namespace}/${d.name}` === key,
              ),
            )
            .map(keyOf);
        },
      },
    ],
  };
}
