import { createHash } from 'node:crypto';
import {
  CLUSTER_SECRET_LABEL,
  KUSTOMIZATION_SET_FINALIZER,
  KUSTOMIZATION_SET_NAME_LABEL,
  KUSTOMIZATION_SET_REVISION_ANNOTATION,
  KUSTOMIZE_API_VERSION,
  type KustomizationSet,
  type KustomizationSetStatus,
  type Reason,
} from '@mooring/api';
import {
  type Impersonation,
  type KubeClient,
  type KubeObject,
  type ReconcileContext,
  RetryableError,
  StalledError,
  type Step,
  step,
  WaitingError,
} from '@mooring/runtime';
import type { ReadArtifact } from './artifact-generators.ts';
import type { ClusterProbe } from './cluster-probe.ts';
import { type ClusterSecret, type Element, GeneratorError, generateAll } from './generators.ts';
import { ALL_MEMBER_KINDS, type MemberKind, type MemberObject, memberKindOf } from './member-kinds.ts';
import { type PlanMember, planRollout, type RolloutPlan } from './plan-rollout.ts';
import { type RenderedMember, renderMembers } from './render-members.ts';
import { TemplateError } from './template.ts';

// Reasons of this kind. conditions.ts is being extended by another change in parallel; these move
// there with it (the runtime's error classes take a Reason).
export const SetReason = {
  GeneratorFailed: 'GeneratorFailed' as Reason,
  TemplateFailed: 'TemplateFailed' as Reason,
  EmptyGenerationRefused: 'EmptyGenerationRefused' as Reason,
  RolloutFailed: 'RolloutFailed' as Reason,
  RolloutPaused: 'RolloutPaused' as Reason,
  TemplateKindChanged: 'TemplateKindChanged' as Reason,
  Progressing: 'Progressing' as Reason,
};

export const SET_FIELD_MANAGER = 'mooring-kustomizationset';

export interface SetDeps {
  client: KubeClient;
  probe: ClusterProbe;
  /** The extracted artifact of a directories/files generator's source. */
  readArtifact: (set: KustomizationSet, sourceRef: Parameters<ReadArtifact>[0]) => Promise<{ dir: string }>;
  impersonate: Impersonation | undefined;
}

/** What one reconcile of a KustomizationSet reads and builds, step by step. */
export interface SetRun {
  obj: KustomizationSet;
  ctx: ReconcileContext;
  deps: SetDeps;
  status: KustomizationSetStatus;
  namespace: string;
  secrets: (ClusterSecret & { finalizers: string[]; resourceVersion?: string })[];
  elements: Element[];
  /** The kind the template makes, known once the template renders. */
  kind?: MemberKind;
  rendered: RenderedMember[];
  live: MemberObject[];
  unreachable: Map<string, string>;
  plan?: RolloutPlan;
}

const setName = (run: SetRun) => run.obj.metadata.name;

/** One object this set owns, with the kind it was listed as. */
export interface OwnedMember {
  kind: MemberKind;
  obj: MemberObject;
}

/** The objects of `kinds` this set owns now (by label and owner uid). */
export async function ownedMembers(
  client: KubeClient,
  set: KustomizationSet,
  kinds: readonly MemberKind[] = ALL_MEMBER_KINDS,
): Promise<OwnedMember[]> {
  const lists = await Promise.all(
    kinds.map(async (kind) => {
      const list = await client.list<MemberObject & KubeObject>(kind.apiVersion, kind.kind, {
        namespace: set.metadata.namespace,
        labelSelector: `${KUSTOMIZATION_SET_NAME_LABEL}=${set.metadata.name}`,
      });
      return list.items
        .filter((o) =>
          (o.metadata.ownerReferences as { uid?: string }[] | undefined)?.some(
            (r) => r.uid === set.metadata.uid,
          ),
        )
        .map((obj) => ({ kind, obj }));
    }),
  );
  return lists.flat();
}

/** The API key of an owned object. */
export const memberKey = (m: OwnedMember) => ({
  apiVersion: m.kind.apiVersion,
  kind: m.kind.kind,
  namespace: m.obj.metadata.namespace,
  name: m.obj.metadata.name,
});

/** The cluster Secrets of a namespace, as the clusters generator and the finalizer read them. */
export async function listClusterSecrets(client: KubeClient, namespace: string): Promise<SetRun['secrets']> {
  const list = await client.list('v1', 'Secret', { namespace, labelSelector: CLUSTER_SECRET_LABEL });
  return list.items.map((s) => ({
    name: s.metadata.name ?? '',
    labels: s.metadata.labels ?? {},
    annotations: s.metadata.annotations ?? {},
    deleting: !!s.metadata.deletionTimestamp,
    finalizers: s.metadata.finalizers ?? [],
    resourceVersion: s.metadata.resourceVersion,
  }));
}

async function readClusters(run: SetRun): Promise<undefined> {
  const needsClusters = run.obj.spec.generators.some(
    (g) =>
      g.clusters ||
      g.matrix?.generators.some((l) => l.clusters) ||
      g.merge?.generators.some((l) => l.clusters),
  );
  if (!needsClusters) return;
  run.secrets = await listClusterSecrets(run.deps.client, run.namespace);
}

/** Generator errors keep everything: nothing is written or deleted on a partial picture. */
async function generateElements(run: SetRun): Promise<undefined> {
  try {
    run.elements = await generateAll(run.obj.spec.generators, {
      listClusters: async () => run.secrets,
      readArtifact: (ref) => run.deps.readArtifact(run.obj, ref),
    });
  } catch (err) {
    if (err instanceof GeneratorError)
      throw new RetryableError(
        SetReason.GeneratorFailed,
        `${err.message}; the generated objects are kept as they are`,
      );
    throw err;
  }
}

async function render(run: SetRun): Promise<undefined> {
  try {
    run.kind = memberKindOf(run.obj.spec.template);
    run.rendered = renderMembers(run.obj.spec.template, run.elements, run.kind);
  } catch (err) {
    if (err instanceof TemplateError)
      throw new StalledError(
        SetReason.TemplateFailed,
        `template: ${err.message}; the generated objects are kept as they are`,
      );
    throw err;
  }
}

async function readLive(run: SetRun): Promise<undefined> {
  const owned = await ownedMembers(run.deps.client, run.obj);
  const kind = run.kind!;
  // A template whose kind changed would replace every member at once: refused, as an empty result is.
  const other = owned.filter((m) => m.kind !== kind);
  if (other.length)
    throw new RetryableError(
      SetReason.TemplateKindChanged,
      `the template makes ${kind.kind}s but this set owns ${other.length} ${other[0]!.kind.kind}(s) (${other
        .map((m) => m.obj.metadata.name)
        .join(
          ', ',
        )}); nothing is written or deleted: put the template's kind back, or delete those objects (or the set) first`,
    );
  run.live = owned.map((m) => m.obj);
  if (run.rendered.length === 0 && run.live.length > 0)
    throw new RetryableError(
      SetReason.EmptyGenerationRefused,
      `the generators produced no elements where there were ${run.live.length}; nothing is deleted (an empty result is more often a mistake than an intent: remove the set to remove them all)`,
    );
}

async function probeClusters(run: SetRun): Promise<undefined> {
  const secrets = [
    ...new Set(run.rendered.map((m) => m.element.clusterSecret).filter((s) => s !== undefined)),
  ];
  await Promise.all(
    secrets.map(async (name) => {
      const why = await run.deps.probe.unreachable(run.deps.client, run.namespace, name);
      if (why) run.unreachable.set(name, why);
    }),
  );
}

async function plan(run: SetRun): Promise<undefined> {
  const kind = run.kind!;
  const live = new Map(run.live.map((k) => [k.metadata.name, k]));
  const previous = new Map((run.status.members ?? []).map((m) => [m.kustomization, m]));
  const members: PlanMember[] = run.rendered.map((m) => {
    const k = live.get(m.kustomization);
    const unreachable = m.element.clusterSecret ? run.unreachable.get(m.element.clusterSecret) : undefined;
    return {
      name: m.name,
      kustomization: m.kustomization,
      kind: kind.kind,
      labels: m.element.labels,
      desiredRevision: m.revision,
      live: k ? kind.liveState(k) : undefined,
      ...(unreachable ? { unreachable } : {}),
      ...(previous.get(m.kustomization) ? { previous: previous.get(m.kustomization)! } : {}),
    };
  });
  const rolling = run.obj.spec.strategy?.rollingUpdate;
  run.plan = planRollout(members, rolling?.steps, !!rolling?.paused, run.ctx.now());
}

/** Finalizes cluster Secrets in use, so a removed cluster's Secret outlives its member's prune or uninstall. */
async function holdClusterSecrets(run: SetRun): Promise<undefined> {
  const used = new Set(run.rendered.map((m) => m.element.clusterSecret));
  for (const s of run.secrets) {
    if (!used.has(s.name) || s.deleting || s.finalizers.includes(KUSTOMIZATION_SET_FINALIZER)) continue;
    // As the set's identity: the operator itself only reads Secrets.
    await run.deps.client.mergePatch(
      { apiVersion: 'v1', kind: 'Secret', namespace: run.namespace, name: s.name },
      {
        metadata: {
          resourceVersion: s.resourceVersion,
          finalizers: [...s.finalizers, KUSTOMIZATION_SET_FINALIZER],
        },
      },
      undefined,
      run.deps.impersonate,
    );
  }
}

function desiredObject(run: SetRun, m: RenderedMember): KubeObject {
  return {
    apiVersion: run.kind!.apiVersion,
    kind: run.kind!.kind,
    metadata: {
      name: m.kustomization,
      namespace: run.namespace,
      labels: { ...m.labels, [KUSTOMIZATION_SET_NAME_LABEL]: setName(run) },
      annotations: { ...m.annotations, [KUSTOMIZATION_SET_REVISION_ANNOTATION]: m.revision },
      ownerReferences: [
        {
          apiVersion: KUSTOMIZE_API_VERSION,
          kind: 'KustomizationSet',
          name: setName(run),
          uid: run.obj.metadata.uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: m.spec,
  };
}

async function writeMembers(run: SetRun): Promise<undefined> {
  const byName = new Map(run.rendered.map((m) => [m.kustomization, m]));
  for (const name of run.plan!.write) {
    await run.deps.client.apply(desiredObject(run, byName.get(name)!), {
      fieldManager: SET_FIELD_MANAGER,
      force: true,
      impersonate: run.deps.impersonate,
    });
  }
}

/** Removes (or, with deletionPolicy Orphan, releases) the members whose element is gone. */
async function removeStale(run: SetRun): Promise<undefined> {
  const wanted = new Set(run.rendered.map((m) => m.kustomization));
  const kind = run.kind!;
  for (const k of run.live) {
    if (wanted.has(k.metadata.name ?? '') || k.metadata.deletionTimestamp) continue;
    const key = { ...memberKey({ kind, obj: k }), namespace: run.namespace };
    if (run.obj.spec.deletionPolicy === 'Orphan') {
      await run.deps.client.mergePatch(key, {
        metadata: { ownerReferences: null, labels: { [KUSTOMIZATION_SET_NAME_LABEL]: null } },
      });
      run.ctx.event(
        'info',
        'Orphaned',
        `${kind.kind} ${k.metadata.name} left its element; kept (deletionPolicy Orphan)`,
      );
    } else {
      await run.deps.client.delete(key, { impersonate: run.deps.impersonate });
      run.ctx.event('info', 'Deleted', `${kind.kind} ${k.metadata.name} left its element; deleted`);
    }
  }
}

/**
 * A cluster Secret being deleted keeps the set's finalizer until no Kustomization or HelmRelease
 * names it any more: their own finalizers need the kubeconfig to prune or uninstall remotely.
 */
export async function releaseClusterSecrets(
  client: KubeClient,
  namespace: string,
  secrets: readonly (ClusterSecret & { finalizers: string[] })[],
  probe: ClusterProbe,
  which: 'deleting' | 'all' = 'deleting',
  impersonate?: Impersonation,
): Promise<void> {
  const deleting = secrets.filter(
    (s) => (which === 'all' || s.deleting) && s.finalizers.includes(KUSTOMIZATION_SET_FINALIZER),
  );
  if (!deleting.length) return;
  const lists = await Promise.all(
    ALL_MEMBER_KINDS.map((k) => client.list<MemberObject & KubeObject>(k.apiVersion, k.kind, { namespace })),
  );
  const named = new Set(lists.flatMap((l) => l.items.map((o) => o.spec.kubeConfig?.secretRef?.name)));
  for (const s of deleting) {
    if (named.has(s.name)) continue;
    await client.mergePatch(
      { apiVersion: 'v1', kind: 'Secret', namespace, name: s.name },
      { metadata: { finalizers: s.finalizers.filter((f) => f !== KUSTOMIZATION_SET_FINALIZER) } },
      undefined,
      impersonate,
    );
    probe.forget(namespace, s.name);
  }
}

async function release(run: SetRun): Promise<undefined> {
  await releaseClusterSecrets(
    run.deps.client,
    run.namespace,
    run.secrets,
    run.deps.probe,
    'deleting',
    run.deps.impersonate,
  );
}

/** The fleet status, then how the reconcile ends: Ready only when the rollout is complete. */
function record(run: SetRun): { requeueAfterMs?: number } {
  const p = run.plan!;
  run.status.members = p.members;
  run.status.rollout = p.rollout;
  run.status.revision = run.rendered.length ? templateRevision(run) : undefined;
  const count = (f: (m: (typeof p.members)[number]) => boolean) => p.members.filter(f).length;
  run.status.counts = {
    total: p.members.length,
    ready: count((m) => m.ready === 'True'),
    current: count((m) => m.state === 'Current'),
    failed: count((m) => m.state === 'Failed'),
    unreachable: count((m) => m.state === 'Unreachable'),
  };
  const unreachable = p.members.filter((m) => m.state === 'Unreachable').map((m) => m.name);
  const skipped = unreachable.length ? `; unreachable, skipped: ${unreachable.join(', ')}` : '';
  if (p.rollout.phase === 'Failed')
    throw new RetryableError(SetReason.RolloutFailed, `rollout stopped: ${p.rollout.message}${skipped}`);
  if (p.rollout.phase === 'Paused')
    throw new WaitingError(SetReason.RolloutPaused, `${p.rollout.message}${skipped}`, 60_000);
  if (p.rollout.phase === 'Progressing')
    throw new WaitingError(
      SetReason.Progressing,
      `${p.rollout.message}${skipped}`,
      p.requeueAfterMs ?? 30_000,
    );
  if (unreachable.length) throw new WaitingError(SetReason.Progressing, `rollout complete${skipped}`, 30_000);
  return {};
}

/** sha256 of the template, first 12 hex: what `mooring get` shows as the set's revision. */
function templateRevision(run: SetRun): string {
  return createHash('sha256').update(JSON.stringify(run.obj.spec.template)).digest('hex').slice(0, 12);
}

/** A KustomizationSet's reconcile; docs/architecture.md lists the same steps. */
export const KUSTOMIZATION_SET_STEPS: readonly Step<SetRun>[] = [
  step('read clusters', readClusters),
  step('generate', generateElements),
  step('render', render),
  step('read generated', readLive),
  step('probe clusters', probeClusters),
  step('plan rollout', plan),
  step('hold cluster secrets', holdClusterSecrets),
  step('write members', writeMembers),
  step('remove stale', removeStale),
  step('release cluster secrets', release),
  step('record fleet status', record),
];
