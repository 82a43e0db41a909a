// What this reconcile does with the release: install, upgrade, or nothing new (drift correction
// only), and whether remediation retries for this very chart and values have run out. Requests a
// user makes by hand are not another try of the same spec and pass the retries gate: a rollback
// (asked or held, ./rollback-request.ts) and `mooring reconcile helmrelease --force`, a one-off
// install or upgrade even when nothing changed (Flux's `reconcile.fluxcd.io/forceAt`).
import {
  FORCE_REQUESTED_AT_ANNOTATION,
  RECONCILE_REQUESTED_AT_ANNOTATION,
  Reason,
  ROLLBACK_ANNOTATION,
} from '@mooring/api';
import { StalledError } from '@mooring/runtime';
import { type HelmReleaseRun, need } from '../helm-release-run.ts';
import { configDigest } from '../values.ts';
import { isOurs, retriesExhausted } from './read-history.ts';

export type ReleaseAction = 'none' | 'install' | 'upgrade';

/** What the decision rests on, read from the records, the spec and the status. */
export interface ActionFacts {
  /** A deployed record exists. */
  deployed: boolean;
  /** The deployed record is this HelmRelease's, the newest, with the chart and values desired now. */
  upToDate: boolean;
  /** The chart revision or the values differ from the last attempt. */
  desiredChanged: boolean;
  /** Failed installs and upgrades of the last attempted chart and values. */
  failures: { install: number; upgrade: number };
  /** `spec.install|upgrade.remediation.retries` (Flux's default 0; -1 is unlimited). */
  retries: { install: number; upgrade: number };
  /** A new `reconcile.mooring.dev/forceAt`, written with the same requestedAt. */
  forced: boolean;
  /** A rollback asked for and not handled yet, or one held. */
  rollback: boolean;
}

/** The action, or `exhausted` when retrying the same chart and values again cannot help. */
export function decideAction(f: ActionFacts): { action: ReleaseAction; exhausted: boolean } {
  const next = f.deployed ? 'upgrade' : 'install';
  if (f.forced) return { action: next, exhausted: false };
  if (f.upToDate) return { action: 'none', exhausted: false };
  const failures = f.failures[next];
  const exhausted =
    !f.desiredChanged && !f.rollback && failures > 0 && retriesExhausted(failures, f.retries[next]);
  return { action: next, exhausted };
}

/** The forceAt value to handle now: new, and asked with the same requestedAt, as Flux requires. */
export function forceRequest(
  annotations: Record<string, string> | undefined,
  lastHandled: string | undefined,
): string | undefined {
  const forceAt = annotations?.[FORCE_REQUESTED_AT_ANNOTATION];
  if (!forceAt || forceAt === lastHandled) return undefined;
  return forceAt === annotations?.[RECONCILE_REQUESTED_AT_ANNOTATION] ? forceAt : undefined;
}

export async function decideReleaseAction(run: HelmReleaseRun): Promise<undefined> {
  const { status, obj } = run;
  const chart = need(run.chart, 'the chart');
  const digest = need(run.configDigest, 'the values');
  const history = need(run.history, 'the history');
  // A new desired state starts its failure count afresh.
  const desiredChanged =
    status.lastAttemptedRevision !== chart.revision || status.lastAttemptedConfigDigest !== digest;
  if (desiredChanged) {
    status.installFailures = 0;
    status.upgradeFailures = 0;
    status.failures = 0;
  }
  const deployed = run.deployed;
  const upToDate =
    deployed !== undefined &&
    isOurs(deployed, run.owner) &&
    deployed === history.at(-1) &&
    deployed.chart?.metadata?.name === chart.name &&
    deployed.chart?.metadata?.version === chart.version &&
    configDigest(deployed.config ?? {}) === digest;
  const annotations = obj.metadata.annotations;
  const rollback = annotations?.[ROLLBACK_ANNOTATION];
  const forceAt = forceRequest(annotations, status.lastHandledForceAt);
  const retriesOf = (r: { retries?: number } | undefined) => r?.retries ?? 0;
  const decision = decideAction({
    deployed: deployed !== undefined,
    upToDate,
    desiredChanged,
    failures: { install: status.installFailures ?? 0, upgrade: status.upgradeFailures ?? 0 },
    retries: {
      install: retriesOf(obj.spec.install?.remediation),
      upgrade: retriesOf(obj.spec.upgrade?.remediation),
    },
    forced: forceAt !== undefined,
    rollback: (!!rollback && rollback !== status.lastHandledRollbackAt) || !!status.rollbackHold,
  });
  if (forceAt !== undefined) {
    // Handled whatever the outcome, as Flux does: a failed forced upgrade is not forced again.
    status.lastHandledForceAt = forceAt;
    run.forced = true;
    run.ctx.event(
      'info',
      Reason.Progressing,
      `forced ${decision.action} asked with ${FORCE_REQUESTED_AT_ANNOTATION}`,
    );
  }
  run.action = decision.action;
  if (decision.exhausted) {
    const failures = decision.action === 'install' ? status.installFailures : status.upgradeFailures;
    const retries = retriesOf(
      decision.action === 'install' ? obj.spec.install?.remediation : obj.spec.upgrade?.remediation,
    );
    throw new StalledError(
      Reason.RetriesExceeded,
      `${decision.action} of chart ${chart.name}@${chart.version} failed ${failures} times (retries: ${retries}); change the chart or values, or force one more try with 'mooring reconcile helmrelease ${obj.metadata.name} -n ${obj.metadata.namespace} --force'`,
    );
  }
  return undefined;
}
