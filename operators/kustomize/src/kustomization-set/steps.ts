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
import type { GitClient } from '@mooring/git';
import {
  type Impersonation,
  type KubeClient,
  type KubeObject,
  parseDuration,
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
import {
  commitFleet,
  committedState,
  type FleetCheckout,
  type FleetSet,
  memberYaml,
  openFleet,
  removeMemberFiles,
  writeMemberFile,
} from './git-delivery.ts';
import { ALL_MEMBER_KINDS, type MemberKind, type MemberObject, memberKindOf } from './member-kinds.ts';
import { type LiveState, type PlanMember, planRollout, type RolloutPlan } from './plan-rollout.ts';
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
  DeliveryModeChanged: 'DeliveryModeChanged' as Reason,
  Progressing: 'Progressing' as Reason,
};

export const SET_FIELD_MANAGER = 'mooring-kustomizationset';

/** How long a directories or files generator may take to fetch its source's artifact. */
const ARTIFACT_FETCH_TIMEOUT_MS = 120_000;

export interface SetDeps {
  client: KubeClient;
  probe: ClusterProbe;
  /** The extracted artifact of a directories/files generator's source, fetched within `signal`. */
  readArtifact: (
    set: KustomizationSet,
    sourceRef: Parameters<ReadArtifact>[0],
    signal: AbortSignal,
  ) => Promise<{ dir: string }>;
  impersonate: Impersonation | undefined;
  /** Commits and pushes a fleet repository (delivery mode git). */
  git: GitClient;
}

/** What one reconcile of a KustomizationSet reads and builds, step by step. */
export interface SetRun {
  obj: KustomizationSet;
  ctx: ReconcileContext;
  deps: SetDeps;
  status: KustomizationSetStatus;
  namespace: string;
  secrets: (ClusterSecret & { finalizers: string[]; resourceVersion?: string; hasKubeconfig: boolean })[];
  elements: Element[];
  /** The kind the template makes, known once the template renders. */
  kind?: MemberKind;
  rendered: RenderedMember[];
  live: MemberObject[];
  unreachable: Map<string, string>;
  plan?: RolloutPlan;
  /** Delivery mode git: the pass's clone of the fleet repository (removed when the pass ends). */
  fleet?: FleetCheckout;
  /** Delivery mode git: each member as committed and, when readable, as its agent holds it. */
  committed?: Map<string, { live: LiveState | undefined; unobserved?: string }>;
}

/** The set's delivery, when it commits to a fleet repository instead of making members here. */
function gitDelivery(run: SetRun): FleetSet | undefined {
  const delivery = run.obj.spec.delivery;
  if (delivery?.mode !== 'git') return undefined;
  return { namespace: run.namespace, name: setName(run), delivery };
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

/** Whether a cluster Secret's data holds a kubeconfig where spec.kubeConfig looks by default. */
const hasKubeconfig = (data: Record<string, string> | undefined) => !!(data?.value || data?.['value.yaml']);

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
    hasKubeconfig: hasKubeconfig((s as { data?: Record<string, string> }).data),
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
      readArtifact: (ref) => run.deps.readArtifact(run.obj, ref, run.ctx.deadline(ARTIFACT_FETCH_TIMEOUT_MS)),
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
  const git = gitDelivery(run);
  if (git) {
    // Moving a fleet from push to git would leave two writers per cluster: refused until they are gone.
    if (owned.length)
      throw new RetryableError(
        SetReason.DeliveryModeChanged,
        `delivery mode git, but this set owns ${owned.length} member(s) on this cluster (${owned
          .map((m) => m.obj.metadata.name)
          .join(', ')}); nothing is committed: delete them (or the set) first, or put mode push back`,
      );
    try {
      run.fleet = await openFleet(run.deps, git, run.rendered, (ms) => run.ctx.deadline(ms));
    } catch (err) {
      if (err instanceof TemplateError) throw new StalledError(SetReason.TemplateFailed, err.message);
      throw err;
    }
    if (run.rendered.length === 0 && run.fleet.files.size > 0)
      throw new RetryableError(
        SetReason.EmptyGenerationRefused,
        `the generators produced no elements where there were ${run.fleet.files.size}; no file is removed from the fleet repository (an empty result is more often a mistake than an intent: remove the set to remove them all)`,
      );
    return;
  }
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

/**
 * Delivery mode git: each member's agent object, read once (GET) through its cluster Secret's
 * kubeconfig when there is one. Nothing is written there: the agent applies what was committed.
 */
async function readAgents(run: SetRun, fleet: FleetCheckout): Promise<void> {
  const kind = run.kind!;
  const secrets = new Map(run.secrets.map((s) => [s.name, s]));
  run.committed = new Map();
  await Promise.all(
    run.rendered.map(async (m) => {
      const file = fleet.files.get(m.kustomization);
      const secret = m.element.clusterSecret ? secrets.get(m.element.clusterSecret) : undefined;
      const committedAt = `committed to ${fleet.branch}`;
      if (!secret?.hasKubeconfig) {
        run.committed!.set(m.kustomization, {
          live: committedState(file?.revision, undefined),
          unobserved: `${committedAt}; no kubeconfig to read its agent's Ready from`,
        });
        return;
      }
      const read = await run.deps.probe.read<MemberObject & KubeObject>(
        run.deps.client,
        run.namespace,
        secret.name,
        { apiVersion: kind.apiVersion, kind: kind.kind, namespace: run.namespace, name: m.kustomization },
      );
      if ('unreachable' in read) {
        run.committed!.set(m.kustomization, {
          live: committedState(file?.revision, undefined),
          unobserved: `${committedAt}; its agent's Ready cannot be read: ${read.unreachable}`,
        });
        return;
      }
      run.committed!.set(m.kustomization, {
        live: committedState(file?.revision, { obj: read.obj, liveState: kind.liveState }),
      });
    }),
  );
}

async function probeClusters(run: SetRun): Promise<undefined> {
  if (run.fleet) {
    await readAgents(run, run.fleet);
    return;
  }
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
    const committed = run.committed?.get(m.kustomization);
    const before = previous.get(m.kustomization);
    const common = {
      name: m.name,
      kustomization: m.kustomization,
      kind: kind.kind,
      labels: m.element.labels,
      desiredRevision: m.revision,
      ...(before ? { previous: before } : {}),
    };
    // Delivery mode git: what the agent reports for the committed file; push: the member here.
    if (committed)
      return {
        ...common,
        live: committed.live,
        ...(committed.unobserved ? { unobserved: committed.unobserved } : {}),
      };
    return { ...common, live: k ? kind.liveState(k) : undefined, ...(unreachable ? { unreachable } : {}) };
  });
  const rolling = run.obj.spec.strategy?.rollingUpdate;
  run.plan = planRollout(members, rolling?.steps, !!rolling?.paused, run.ctx.now());
}

/** Finalizes cluster Secrets in use, so a removed cluster's Secret outlives its member's prune or uninstall. */
async function holdClusterSecrets(run: SetRun): Promise<undefined> {
  // Git mode prunes nothing remotely (each agent prunes its own cluster): no Secret is held.
  if (run.fleet) return;
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
  const git = gitDelivery(run);
  if (run.fleet && git) {
    for (const name of run.plan!.write)
      await writeMemberFile(
        run.fleet,
        name,
        memberYaml(git, byName.get(name)!, run.kind!.apiVersion, run.kind!.kind),
      );
    return;
  }
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
  if (run.fleet) {
    // deletionPolicy applies on the agent: its file gone, the agent prunes the member it applied.
    for (const name of await removeMemberFiles(run.fleet, wanted))
      run.ctx.event('info', 'Deleted', `${kind.kind} ${name} left its element; its file is removed`);
    return;
  }
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

/** Delivery mode git: the pass's one commit, pushed, when it changed a file. */
async function commitFleetChanges(run: SetRun): Promise<undefined> {
  const git = gitDelivery(run);
  if (!run.fleet || !git) return;
  const commit = await commitFleet(run.deps.git, git, run.fleet);
  if (commit)
    run.ctx.event(
      'info',
      'Committed',
      `pushed ${commit.slice(0, 12)} to ${run.fleet.branch}: ${[...run.fleet.written, ...run.fleet.removed].join(', ')}`,
    );
}

/** Each member's file and the commit that wrote it as it is now (delivery mode git). */
function recordCommits(run: SetRun, fleet: FleetCheckout): void {
  const previous = new Map((run.status.members ?? []).map((m) => [m.kustomization, m]));
  for (const m of run.plan!.members) {
    const path = fleet.paths.get(m.kustomization);
    if (!path) continue;
    const before = previous.get(m.kustomization);
    const commit =
      fleet.commit && fleet.written.includes(path)
        ? fleet.commit
        : before?.path === path && before.commit
          ? before.commit
          : fleet.files.get(m.kustomization)?.path === path
            ? fleet.head
            : undefined;
    m.path = path;
    if (commit) m.commit = commit;
    if (m.state === 'Committed' && commit) m.message = `${m.message} at ${commit.slice(0, 12)}`;
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
  if (run.fleet) recordCommits(run, run.fleet);
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
  // Git mode watches no agent: it looks again at the set's interval (30 s at most).
  const poll = run.fleet ? Math.min(30_000, parseDuration(run.obj.spec.interval)) : 30_000;
  if (p.rollout.phase === 'Progressing')
    throw new WaitingError(SetReason.Progressing, `${p.rollout.message}${skipped}`, p.requeueAfterMs ?? poll);
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
  step('commit fleet', commitFleetChanges),
  step('release cluster secrets', release),
  step('record fleet status', record),
];
