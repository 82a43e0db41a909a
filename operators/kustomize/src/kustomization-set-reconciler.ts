import {
  KUSTOMIZATION_SET_NAME_LABEL,
  KUSTOMIZE_API_VERSION,
  type KustomizationSet,
  type KustomizationSetStatus,
} from '@mooring/api';
import { createGitClient, type GitClient } from '@mooring/git';
import {
  type KubeClient,
  type KubeObject,
  type ReconcileContext,
  type ReconcileResult,
  type Reconciler,
  RetryableError,
  runSteps,
  WaitingError,
} from '@mooring/runtime';
import { impersonationFor } from './impersonation.ts';
import { ClusterProbe } from './kustomization-set/cluster-probe.ts';
import { commitFleet, openFleet, removeMemberFiles } from './kustomization-set/git-delivery.ts';
import { ALL_MEMBER_KINDS, type MemberObject } from './kustomization-set/member-kinds.ts';
import {
  KUSTOMIZATION_SET_STEPS,
  listClusterSecrets,
  memberKey,
  ownedMembers,
  releaseClusterSecrets,
  SET_FIELD_MANAGER,
  type SetDeps,
  type SetRun,
} from './kustomization-set/steps.ts';
import { ArtifactCache } from './render/index.ts';
import { resolveSource } from './source-ref.ts';

export interface KustomizationSetDeps {
  client: KubeClient;
  defaultServiceAccount?: string;
  /** Shared with the Kustomization reconciler: a revision is fetched and verified once. */
  artifacts?: ArtifactCache;
  noCrossNamespaceRefs?: boolean;
  /** Commits to the fleet repository of a set in delivery mode git; the git command line by default. */
  git?: GitClient;
}

const FINALIZER = 'finalizers.mooring.dev';

/**
 * The KustomizationSet reconciler: generators make elements, the template one Kustomization (or
 * HelmRelease) per element (owned by the set), a rolling update moves changes across them step by
 * step, and the status reports every member. Finalize deletes (or orphans) them, per deletionPolicy.
 */
export function kustomizationSetReconciler(deps: KustomizationSetDeps): Reconciler<KustomizationSet> {
  const probe = new ClusterProbe();
  const git = deps.git ?? createGitClient('cli');
  const artifacts = deps.artifacts ?? new ArtifactCache();
  const readArtifact: SetDeps['readArtifact'] = async (set, sourceRef, signal) => {
    const { artifact } = await resolveSource(
      deps.client,
      { metadata: set.metadata, spec: { sourceRef } },
      { noCrossNamespaceRefs: !!deps.noCrossNamespaceRefs, requeueDependencyMs: 30_000 },
    );
    return artifacts.get(artifact, signal);
  };
  const impersonate = (obj: KustomizationSet) =>
    impersonationFor({ metadata: obj.metadata, spec: {} }, deps.defaultServiceAccount);

  async function reconcile(obj: KustomizationSet, ctx: ReconcileContext): Promise<ReconcileResult> {
    const run: SetRun = {
      obj,
      ctx,
      deps: { client: deps.client, probe, readArtifact, impersonate: impersonate(obj), git },
      status: ctx.status as KustomizationSetStatus,
      namespace: obj.metadata.namespace ?? 'default',
      secrets: [],
      elements: [],
      rendered: [],
      live: [],
      unreachable: new Map(),
    };
    let outcome: Awaited<ReturnType<typeof runSteps>>;
    try {
      outcome = await runSteps(KUSTOMIZATION_SET_STEPS, run, (name) => ctx.log.debug({ step: name }, 'step'));
    } finally {
      await run.fleet?.close();
    }
    const n = run.rendered.length;
    if (run.fleet) {
      const ready = run.status.counts?.ready ?? 0;
      return {
        message: `${n} ${run.kind?.kind ?? 'Kustomization'}s committed to ${run.fleet.branch} at revision ${run.status.revision ?? '-'}; ${ready} of ${n} Ready on their clusters`,
        revision: run.status.revision,
        ...outcome,
      };
    }
    return {
      message: `${n} of ${n} ${run.kind?.kind ?? 'Kustomization'}s at revision ${run.status.revision ?? '-'} and Ready`,
      revision: run.status.revision,
      ...outcome,
    };
  }

  return {
    apiVersion: KUSTOMIZE_API_VERSION,
    kind: 'KustomizationSet',
    finalizer: FINALIZER,
    defaultIntervalMs: 600_000,
    reconcile,

    async finalize(obj, ctx) {
      if (obj.spec.delivery?.mode === 'git' && obj.spec.deletionPolicy !== 'Orphan')
        // Without its GitRepository (deleted first, e.g. with the namespace) the set must not hang.
        await removeFleetFiles(deps.client, git, obj, (ms) => ctx.deadline(ms)).catch((err: unknown) => {
          if (!(err instanceof WaitingError)) throw err;
          ctx.event('error', 'PruneFailed', `its files are left in the fleet repository: ${err.message}`);
        });
      const owned = await ownedMembers(deps.client, obj);
      for (const m of owned) {
        const k = m.obj;
        const key = memberKey(m);
        if (obj.spec.deletionPolicy === 'Orphan') {
          await deps.client.mergePatch(key, {
            metadata: { ownerReferences: null, labels: { [KUSTOMIZATION_SET_NAME_LABEL]: null } },
          });
        } else if (!k.metadata.deletionTimestamp) {
          await deps.client.delete(key, { impersonate: impersonate(obj) });
        }
      }
      if (obj.spec.deletionPolicy !== 'Orphan' && owned.length) {
        // Waited for while their clusters answer: their finalizers need the cluster Secrets this
        // set holds. One on a dead cluster keeps retrying its prune alone and does not hold the set.
        const namespace = obj.metadata.namespace ?? 'default';
        const waiting: string[] = [];
        for (const { kind, obj: k } of owned) {
          const secret = k.spec.kubeConfig?.secretRef?.name;
          const down = secret ? await probe.unreachable(deps.client, namespace, secret) : undefined;
          if (down)
            ctx.event('error', 'PruneFailed', `${kind.kind} ${k.metadata.name} left deleting: ${down}`);
          else waiting.push(`${kind.kind} ${k.metadata.name}`);
        }
        if (waiting.length)
          throw new RetryableError('PruneFailed', `waiting for ${waiting.join(', ')} to be deleted`);
      }
      const namespace = obj.metadata.namespace ?? 'default';
      await releaseClusterSecrets(
        deps.client,
        namespace,
        await listClusterSecrets(deps.client, namespace),
        probe,
        'all',
        impersonate(obj),
      );
      ctx.log.debug({ fieldManager: SET_FIELD_MANAGER }, 'generated objects released');
    },

    // A generated object (of either kind) turning Ready, failing, releasing or going away moves the
    // rollout on; a HelmRelease's latest release is part of its being at a revision.
    watches: ALL_MEMBER_KINDS.map((kind) => ({
      apiVersion: kind.apiVersion,
      kind: kind.kind,
      enqueue(changed: KubeObject, old: KubeObject | undefined): string[] {
        const set = changed.metadata.labels?.[KUSTOMIZATION_SET_NAME_LABEL];
        if (!set) return [];
        const summary = (o: KubeObject | undefined) => {
          const k = o as MemberObject | undefined;
          const ready = k?.status?.conditions?.find((c) => c.type === 'Ready');
          const latest = (k?.status as { history?: { version?: number; status?: string }[] } | undefined)
            ?.history?.[0];
          return `${k?.metadata.generation}/${ready?.status}/${ready?.observedGeneration}/${k?.metadata.deletionTimestamp}/${latest?.version}/${latest?.status}`;
        };
        if (old && summary(old) === summary(changed)) return [];
        return [`${changed.metadata.namespace}/${set}`];
      },
    })),
  };
}

/** A deleted set in delivery mode git removes its files in one commit; each agent then prunes. */
async function removeFleetFiles(
  client: KubeClient,
  git: GitClient,
  obj: KustomizationSet,
  deadline: (ms: number) => AbortSignal,
): Promise<void> {
  const set = {
    namespace: obj.metadata.namespace ?? 'default',
    name: obj.metadata.name ?? '',
    delivery: obj.spec.delivery!,
  };
  const fleet = await openFleet({ client, git }, set, [], deadline);
  try {
    await removeMemberFiles(fleet, new Set());
    await commitFleet(git, set, fleet);
  } finally {
    await fleet.close();
  }
}
