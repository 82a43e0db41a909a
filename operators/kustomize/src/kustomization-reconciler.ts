import {
  ConditionType,
  FINALIZER,
  type HistorySnapshot,
  KUSTOMIZE_API_VERSION,
  type Kustomization,
  Reason,
  SOURCE_API_VERSION,
} from '@mooring/api';
import {
  type Impersonation,
  type KubeClient,
  type KubeObject,
  type ReconcileContext,
  type ReconcileResult,
  type Reconciler,
  RetryableError,
  readObjectData,
  StalledError,
  timeoutSignal,
  WaitingError,
} from '@mooring/runtime';
import { type ApplyChange, ApplyError, applySet } from './apply/apply-set.ts';
import { applyIgnoreRules } from './apply/drift-ignore.ts';
import { CelError } from './cel.ts';
import { checkDependencies, findDependencyCycle } from './dependencies.ts';
import { waitForHealth } from './health.ts';
import { compileHealthExprs, evaluateHealth } from './health-exprs.ts';
import {
  fromEntry,
  inventoryId,
  inventoryOf,
  type ObjectRef,
  refToString,
  staleEntries,
} from './inventory.ts';
import { pruneObjects, waitForTermination } from './prune.ts';
import { RemoteClusters } from './remote-cluster.ts';
import { overridesOf, type RenderCache, type RenderInputs } from './render.ts';
import { resolveSource, sourceKey } from './source-ref.ts';
import { kustomizationTimings } from './timeouts.ts';

export interface KustomizationDeps {
  client: KubeClient;
  renderCache: RenderCache;
  noCrossNamespaceRefs: boolean;
  defaultServiceAccount: string | undefined;
  requeueDependencyMs: number;
  /** Parallel applies within one Kustomization. */
  concurrentApplies: number;
}

const HISTORY_LIMIT = 5;

/**
 * Who writes on the object's behalf: its service account, else the operator's default, else the
 * operator. The default is for this cluster only, where it bounds the operator's own rights; on a
 * cluster `spec.kubeConfig` names, the kubeconfig's credentials are the authority, and only a
 * service account the object names is impersonated there (as Flux does). No Impersonate-Group is sent: the API server adds a service account's own groups, and
 * the operator then needs `impersonate` on serviceaccounts only, never on groups (which would
 * let it act as system:masters).
 */
export function impersonationFor(
  obj: Kustomization,
  fallback: string | undefined,
): Impersonation | undefined {
  const sa = obj.spec.serviceAccountName ?? (obj.spec.kubeConfig ? undefined : fallback);
  if (!sa) return undefined;
  return { user: `system:serviceaccount:${obj.metadata.namespace ?? 'default'}:${sa}` };
}

const keyOf = (o: { metadata: { namespace?: string; name?: string } }) =>
  `${o.metadata.namespace}/${o.metadata.name}`;

async function readData(
  client: KubeClient,
  kind: 'Secret' | 'ConfigMap',
  namespace: string,
  name: string,
  optional: boolean,
): Promise<Record<string, string> | undefined> {
  const data = await readObjectData(client, kind, namespace, name);
  if (data === undefined && !optional) {
    throw new RetryableError(Reason.BuildFailed, `${kind} ${namespace}/${name} not found`);
  }
  return data;
}

/** `postBuild` variables: `substituteFrom` in order (later wins), then the inline `substitute` over them. */
async function substitutionVars(client: KubeClient, obj: Kustomization): Promise<RenderInputs['substitute']> {
  const post = obj.spec.postBuild;
  if (!post) return undefined;
  const vars: Record<string, string> = {};
  for (const ref of post.substituteFrom ?? []) {
    const data = await readData(
      client,
      ref.kind as 'Secret' | 'ConfigMap',
      obj.metadata.namespace ?? 'default',
      ref.name,
      !!ref.optional,
    );
    Object.assign(vars, data ?? {});
  }
  Object.assign(vars, post.substitute ?? {});
  return { vars, options: { strict: true, strategy: post.substituteStrategy ?? 'WithVariables' } };
}

async function decryptionKeys(client: KubeClient, obj: Kustomization): Promise<RenderInputs['decryption']> {
  const dec = obj.spec.decryption;
  if (!dec) return undefined;
  if (!dec.secretRef?.name) return { ageIdentities: [] };
  const data = await readData(
    client,
    'Secret',
    obj.metadata.namespace ?? 'default',
    dec.secretRef.name,
    false,
  );
  const ageIdentities = Object.entries(data ?? {})
    .filter(([k]) => k.endsWith('.agekey'))
    .map(([, v]) => v.trim());
  return { ageIdentities };
}

/** A one-line summary of what an apply changed, for the event Flux users know ("Deployment/a/b configured"). */
function changeSummary(changes: ApplyChange[]): string {
  return changes
    .filter((c) => c.action !== 'unchanged' && c.action !== 'skipped')
    .map((c) => `${refToString(c.ref)} ${c.action}`)
    .join('\n');
}

function recordHistory(
  history: HistorySnapshot[] | undefined,
  entry: { digest: string; status: string; revision: string; durationMs: number; now: string },
): HistorySnapshot[] {
  const list = [...(history ?? [])];
  const i = list.findIndex((h) => h.digest === entry.digest && h.lastReconciledStatus === entry.status);
  const duration = `${(entry.durationMs / 1000).toFixed(3)}s`;
  if (i >= 0) {
    const h = list.splice(i, 1)[0]!;
    list.unshift({
      ...h,
      lastReconciled: entry.now,
      lastReconciledDuration: duration,
      totalReconciliations: (h.totalReconciliations ?? 0) + 1,
      metadata: { ...h.metadata, revision: entry.revision },
    });
  } else {
    list.unshift({
      digest: entry.digest,
      firstReconciled: entry.now,
      lastReconciled: entry.now,
      lastReconciledDuration: duration,
      lastReconciledStatus: entry.status,
      totalReconciliations: 1,
      metadata: { revision: entry.revision },
    } as HistorySnapshot);
  }
  return list.slice(0, HISTORY_LIMIT);
}

/**
 * The Kustomization reconciler, in Flux's order: source, dependencies, render (cached), apply in
 * stages, prune, health; status carries the inventory, revisions and history.
 */
export function kustomizationReconciler(deps: KustomizationDeps): Reconciler<Kustomization> {
  const { client } = deps;
  /** Per Kustomization: what we last applied, so an unchanged object costs one GET and no apply. */
  const knownVersions = new Map<string, Map<string, string>>();
  const remotes = new RemoteClusters();

  async function checkDeps(obj: Kustomization, sourceRevision: string): Promise<void> {
    const refs = obj.spec.dependsOn ?? [];
    if (refs.length === 0) return;
    const fetched = new Map<string, Kustomization | undefined>();
    const lookup = async (key: string) => {
      if (!fetched.has(key)) {
        const [namespace, name] = key.split('/') as [string, string];
        fetched.set(
          key,
          await client.getOrUndefined<Kustomization>({
            apiVersion: KUSTOMIZE_API_VERSION,
            kind: 'Kustomization',
            namespace,
            name,
          }),
        );
      }
      return fetched.get(key);
    };
    // Load the whole reachable graph first so the cycle check is synchronous.
    const queue = [obj];
    const seen = new Set([keyOf(obj)]);
    while (queue.length) {
      const cur = queue.shift()!;
      for (const d of cur.spec.dependsOn ?? []) {
        const key = `${d.namespace ?? cur.metadata.namespace}/${d.name}`;
        if (seen.has(key)) continue;
        seen.add(key);
        const dep = await lookup(key);
        if (dep) queue.push(dep);
      }
    }
    const cycle = findDependencyCycle(obj, (key) => (key === keyOf(obj) ? obj : fetched.get(key)));
    if (cycle) throw new StalledError('DependencyCycle', `dependency cycle: ${cycle.join(' → ')}`);
    const direct = new Map<string, Kustomization | undefined>();
    for (const d of refs) {
      const key = `${d.namespace ?? obj.metadata.namespace}/${d.name}`;
      direct.set(key, fetched.get(key));
    }
    let verdict: ReturnType<typeof checkDependencies>;
    try {
      verdict = checkDependencies(obj, direct, sourceRevision);
    } catch (err) {
      if (err instanceof CelError) throw new StalledError(Reason.InvalidCELExpression, err.message);
      throw err;
    }
    if (!verdict.ready) {
      if (verdict.reason === 'InvalidCELExpression') throw new StalledError(verdict.reason, verdict.message);
      throw new WaitingError(Reason.DependencyNotReady, verdict.message, deps.requeueDependencyMs);
    }
  }

  async function reconcile(obj: Kustomization, ctx: ReconcileContext): Promise<ReconcileResult> {
    const started = Date.now();
    const status = ctx.status as NonNullable<Kustomization['status']>;
    const timings = kustomizationTimings(obj);
    const owner = { name: obj.metadata.name ?? '', namespace: obj.metadata.namespace ?? 'default' };
    let healthExprs: ReturnType<typeof compileHealthExprs> | undefined;
    try {
      healthExprs = obj.spec.healthCheckExprs?.length
        ? compileHealthExprs(obj.spec.healthCheckExprs)
        : undefined;
    } catch (err) {
      throw new StalledError(Reason.InvalidCELExpression, (err as Error).message);
    }

    // Not yet supported: refused with a clear condition rather than applied somewhere unexpected.
    if (obj.spec.decryption?.serviceAccountName) {
      throw new StalledError(
        'UnsupportedConfiguration',
        'decryption.serviceAccountName is not supported yet; use secretRef',
      );
    }
    const source = await resolveSource(client, obj, deps);
    const revision = source.artifact.revision;
    // Where the objects go: this cluster, or the one `spec.kubeConfig` names.
    const target = (await remotes.clientFor(client, obj)) ?? client;
    await checkDeps(obj, revision);
    status.lastAttemptedRevision = revision;

    const inputs: RenderInputs = {
      artifact: source.artifact,
      path: obj.spec.path ?? '',
      overrides: overridesOf(obj),
      decryption: await decryptionKeys(client, obj),
      substitute: await substitutionVars(client, obj),
      owner,
    };
    const signal = AbortSignal.any([ctx.signal, timeoutSignal(timings.timeoutMs)]);
    const rendered = await deps.renderCache.get(inputs, signal);

    const previous = status.inventory;
    if (rendered.manifests.length === 0 && (previous?.entries.length ?? 0) > 0 && !obj.spec.allowEmpty) {
      throw new RetryableError(
        'EmptyRenderRefused',
        `revision '${revision}' renders no objects while ${previous!.entries.length} are applied: refusing to prune them all; set spec.allowEmpty: true if this is intended`,
      );
    }

    const impersonate = impersonationFor(obj, deps.defaultServiceAccount);
    const known = knownVersions.get(keyOf(obj)) ?? new Map<string, string>();
    knownVersions.set(keyOf(obj), known);
    // Intent before action: what a stage is about to apply joins the stored inventory first, so a
    // crash or a failed apply can never leave an object on the cluster that no inventory lists.
    const intended = new Map((previous?.entries ?? []).map((e) => [e.id, fromEntry(e)]));
    const recordIntent = async (refs: ObjectRef[]) => {
      const fresh = refs.filter((r) => !intended.has(inventoryId(r)));
      if (fresh.length === 0) return;
      for (const r of fresh) intended.set(inventoryId(r), r);
      status.inventory = inventoryOf([...intended.values()]);
      await ctx.saveProgress(`applying revision '${revision}': ${refs.length} objects to write`);
    };
    let changes: ApplyChange[];
    try {
      changes = await applySet(rendered.manifests, {
        beforeApply: recordIntent,
        client: target,
        defaultNamespace: owner.namespace,
        impersonate,
        force: !!obj.spec.force,
        concurrency: deps.concurrentApplies,
        signal,
        knownVersions: known,
        adjust: obj.spec.ignore?.length
          ? (desired, live) => applyIgnoreRules(desired, live, obj.spec.ignore!)
          : undefined,
        waitForStage0: async (applied) => {
          const ready = await waitForHealth(
            target,
            applied.filter((c) => c.action !== 'skipped').map((c) => c.ref),
            { timeoutMs: 60_000, signal, pollMs: 200 },
          );
          if (!ready.healthy)
            throw new RetryableError(
              Reason.ReconciliationFailed,
              `CRDs and namespaces not ready: ${ready.message}`,
            );
          target.mapper.invalidate();
        },
      });
    } catch (err) {
      if (err instanceof ApplyError) throw new RetryableError(Reason.ReconciliationFailed, err.message);
      throw err;
    }
    const summary = changeSummary(changes);
    if (summary) ctx.event('info', 'Progressing', summary, { revision });

    const applied = changes.map((c) => c.ref);
    const inventory = inventoryOf(applied);
    if (obj.spec.prune) {
      const stale = staleEntries(previous, inventory);
      const pruned = await pruneObjects(target, stale, owner, impersonate);
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
    }
    status.inventory = inventory;

    const toCheck: ObjectRef[] = obj.spec.wait
      ? applied
      : (obj.spec.healthChecks ?? []).map((h) => ({
          apiVersion: h.apiVersion ?? 'v1',
          kind: h.kind,
          namespace: h.namespace ?? owner.namespace,
          name: h.name,
        }));
    if (toCheck.length) {
      if (summary) await ctx.saveProgress(`waiting for ${toCheck.length} objects to become healthy`);
      const health = await waitForHealth(target, toCheck, {
        timeoutMs: timings.timeoutMs,
        signal,
        custom: healthExprs ? (o) => evaluateHealth(healthExprs!, o) : undefined,
      });
      if (!health.healthy) {
        ctx.setCondition(ConditionType.Healthy, 'False', Reason.HealthCheckFailed, health.message);
        throw new RetryableError(
          Reason.HealthCheckFailed,
          `health check failed for revision '${revision}': ${health.message}`,
        );
      }
      ctx.setCondition(ConditionType.Healthy, 'True', Reason.Succeeded, 'all health checks passed');
    }

    status.lastAppliedRevision = revision;
    const origin = source.artifact.metadata?.['org.opencontainers.image.revision'];
    if (origin) status.lastAppliedOriginRevision = origin;
    status.history = recordHistory(status.history, {
      digest: rendered.digest,
      status: 'ReconciliationSucceeded',
      revision,
      durationMs: Date.now() - started,
      now: ctx
        .now()
        .toISOString()
        .replace(/\.\d+Z$/, 'Z'),
    });
    return { message: `Applied revision: ${revision}`, revision, requeueAfterMs: timings.intervalMs };
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
