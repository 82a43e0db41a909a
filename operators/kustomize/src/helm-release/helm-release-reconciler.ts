import {
  DEPENDENCY_KINDS,
  FINALIZER,
  HELM_API_VERSION,
  type HelmRelease,
  KUSTOMIZE_API_VERSION,
  Reason,
  SOURCE_API_VERSION,
} from '@mooring/api';
import {
  type KubeObject,
  parseDuration,
  type ReconcileContext,
  type ReconcileResult,
  type Reconciler,
  RetryableError,
  runSteps,
  stepTimer,
} from '@mooring/runtime';
import { type DependencyNode, dependentsOf } from '../dependencies.ts';
import { impersonationFor } from '../impersonation.ts';
import { RemoteClusters } from '../remote-cluster.ts';
import { RunsInFlight } from '../superseded.ts';
import { chartSourceOf } from './chart-source.ts';
import type { HelmReleaseDeps, HelmReleaseMemory, HelmReleaseRun } from './helm-release-run.ts';
import { placementOf } from './release-names.ts';
import { HELM_RELEASE_STEPS } from './steps/index.ts';
import { recordHistory } from './steps/record-status.ts';
import { uninstallRelease } from './uninstall.ts';

export type { HelmReleaseDeps } from './helm-release-run.ts';

const keyOf = (o: { metadata: { namespace?: string; name?: string } }) =>
  `${o.metadata.namespace}/${o.metadata.name}`;

function durationOr(text: string | undefined, fallback: number): number {
  if (!text) return fallback;
  try {
    return parseDuration(text);
  } catch {
    return fallback;
  }
}

/** `spec.timeout` (Flux's default 5m): how long one action's waits and hooks may take. */
export const timeoutOf = (obj: HelmRelease) => durationOr(obj.spec.timeout, 300_000);

/**
 * The HelmRelease reconciler: its reconcile is the list of steps in ./steps (chart, dependencies,
 * values, release history, render, install or upgrade through the Kustomization's apply, prune and
 * health code, drift correction, status); finalize uninstalls.
 */
export function helmReleaseReconciler(deps: HelmReleaseDeps): Reconciler<HelmRelease> {
  const memory: HelmReleaseMemory = { knownVersions: new Map(), remotes: new RemoteClusters() };
  const inFlight = new RunsInFlight();

  async function reconcile(obj: HelmRelease, ctx: ReconcileContext): Promise<ReconcileResult> {
    const current = inFlight.begin(keyOf(obj), {
      generation: obj.metadata.generation,
      // Read when the watch reports news, after `run` is set (no event runs in between).
      revision: () => run.chart?.revision,
    });
    const run: HelmReleaseRun = {
      obj,
      ctx,
      status: ctx.status as NonNullable<HelmRelease['status']>,
      deps,
      memory,
      started: performance.now(),
      timeoutMs: timeoutOf(obj),
      intervalMs: durationOr(obj.spec.interval, 600_000),
      owner: { name: obj.metadata.name ?? '', namespace: obj.metadata.namespace ?? 'default' },
      placement: placementOf(obj),
      signal: ctx.signal,
      superseded: current.signal,
      previous: obj.status?.inventory,
    };
    let outcome: Awaited<ReturnType<typeof runSteps>>;
    try {
      outcome = await runSteps(
        HELM_RELEASE_STEPS,
        run,
        (name) => ctx.log.debug({ step: name }, 'step'),
        stepTimer(ctx.metrics, 'HelmRelease'),
      );
    } catch (err) {
      // A failed or remediated release is in Helm's records already: status.history shows it too,
      // as Flux's does, instead of lagging until the next success. Best effort: the error stands.
      if (run.store) await recordHistory(run).catch(() => {});
      throw err;
    } finally {
      current.end();
    }
    const latest = run.status.history?.[0];
    const chart = run.chart!;
    const hold = run.status.rollbackHold;
    const held = hold
      ? ` (rolled back to v${hold.version} as asked; held until the chart or values change)`
      : '';
    const message = latest
      ? `Helm release ${latest.namespace}/${latest.name}.v${latest.version} ${latest.status} with chart ${latest.chartName}@${latest.chartVersion}${held}`
      : `chart ${chart.name}@${chart.version} released`;
    const reason =
      run.action === 'install'
        ? Reason.InstallSucceeded
        : run.action === 'upgrade'
          ? Reason.UpgradeSucceeded
          : undefined;
    return {
      message,
      revision: chart.revision,
      requeueAfterMs: outcome.requeueAfterMs,
      ...(reason ? { reason } : {}),
    };
  }

  return {
    apiVersion: HELM_API_VERSION,
    kind: 'HelmRelease',
    finalizer: FINALIZER,
    defaultIntervalMs: 600_000,
    reconcile,

    async finalize(obj, ctx) {
      const key = keyOf(obj);
      memory.knownVersions.delete(key);
      if (obj.spec.suspend) return;
      let target = deps.client;
      if (obj.spec.kubeConfig) {
        try {
          target = (await memory.remotes.clientFor(deps.client, obj)) ?? deps.client;
        } catch (err) {
          // Never this cluster in its place: the same names here are someone else's objects.
          ctx.event(
            'error',
            Reason.UninstallFailed,
            `the remote cluster is unreachable; nothing uninstalled: ${(err as Error).message}`,
          );
          return;
        }
      }
      const problems = await uninstallRelease(obj, {
        client: deps.client,
        target,
        impersonate: impersonationFor(obj, deps.defaultServiceAccount),
        localImpersonate: impersonationFor(
          { ...obj, spec: { ...obj.spec, kubeConfig: undefined } },
          deps.defaultServiceAccount,
        ),
        runHooks: deps.runHooks,
        signal: ctx.signal,
        timeoutMs: timeoutOf(obj),
        now: () => ctx.now(),
      });
      memory.remotes.forget(key);
      // The finalizer stays and the runtime retries: giving up would orphan the release.
      if (problems.length)
        throw new RetryableError(Reason.UninstallFailed, `uninstall incomplete: ${problems.join('; ')}`);
      ctx.event(
        'info',
        Reason.UninstallSucceeded,
        `Helm uninstall succeeded for release ${placementOf(obj).releaseName}`,
      );
    },

    watches: [
      // A new generation (chart version or values) ends a health wait of an older one in flight.
      {
        apiVersion: HELM_API_VERSION,
        kind: 'HelmRelease',
        enqueue(changed: KubeObject, old: KubeObject | undefined): string[] {
          const generation = changed.metadata.generation;
          if (old && generation !== undefined && generation !== old.metadata.generation)
            inFlight.supersede(keyOf(changed), { generation });
          return [];
        },
      },
      // A new chart artifact (a HelmChart's new version, an OCIRepository's new digest) is released,
      // and a health wait for another chart revision in flight is given up for it.
      ...(['HelmChart', 'OCIRepository'] as const).map((kind) => ({
        apiVersion: SOURCE_API_VERSION,
        kind,
        enqueue(changed: KubeObject, old: KubeObject | undefined, objects: readonly HelmRelease[]): string[] {
          const rev = (o: KubeObject | undefined) =>
            (o as { status?: { artifact?: { revision?: string; digest?: string } } } | undefined)?.status
              ?.artifact?.digest;
          if (old && rev(old) === rev(changed)) return [];
          const keys = objects
            .filter((hr) => {
              // An invalid spec (neither chart nor chartRef) names no source.
              if (!hr.spec.chart === !hr.spec.chartRef) return false;
              const s = chartSourceOf(hr);
              return (
                s.kind === kind &&
                s.name === changed.metadata.name &&
                s.namespace === changed.metadata.namespace
              );
            })
            .map(keyOf);
          const revision = (changed as { status?: { artifact?: { revision?: string } } }).status?.artifact
            ?.revision;
          if (revision) for (const key of keys) inFlight.supersede(key, { revision });
          return keys;
        },
      })),
      // A dependency of either kind turning Ready requeues its dependents.
      ...DEPENDENCY_KINDS.map((kind) => ({
        apiVersion: kind === 'Kustomization' ? KUSTOMIZE_API_VERSION : HELM_API_VERSION,
        kind,
        enqueue(changed: KubeObject, old: KubeObject | undefined, objects: readonly HelmRelease[]): string[] {
          const summary = (o: KubeObject | undefined) => {
            const st = (o as DependencyNode | undefined)?.status;
            const ready = st?.conditions?.find((c) => c.type === 'Ready');
            return `${ready?.status}/${st?.observedGeneration}/${st?.lastAppliedRevision}`;
          };
          if (old && summary(old) === summary(changed)) return [];
          return dependentsOf(kind, changed, objects as readonly DependencyNode[], 'HelmRelease');
        },
      })),
    ],
  };
}
