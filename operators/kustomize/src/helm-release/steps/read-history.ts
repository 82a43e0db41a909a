// Where the release stands: its records in the storage namespace (Helm's own, whoever wrote them),
// an operation left pending by a process that died marked failed so the release can proceed, and
// what this reconcile must do: install, upgrade, or nothing new (drift correction only).
import { HELM_NAME_LABEL, HELM_NAMESPACE_LABEL, Reason, ROLLBACK_ANNOTATION } from '@mooring/api';
import {
  helmTime,
  isPendingStatus,
  type ReleaseRecord,
  ReleaseRecordError,
  ReleaseStore,
} from '@mooring/helm';
import { RetryableError, StalledError } from '@mooring/runtime';
import { type HelmReleaseRun, need } from '../helm-release-run.ts';
import { configDigest } from '../values.ts';

/** Whether a record was written for this HelmRelease (a record `helm` or another owner wrote is adopted by an upgrade). */
export function isOurs(record: ReleaseRecord, owner: { name: string; namespace: string }): boolean {
  return (
    record.labels?.[HELM_NAME_LABEL] === owner.name &&
    record.labels?.[HELM_NAMESPACE_LABEL] === owner.namespace
  );
}

/** Flux's retries: -1 never runs out; a count of failures past `retries` has. */
export function retriesExhausted(failures: number, retries: number): boolean {
  return retries >= 0 && failures > retries;
}

export async function readHistory(run: HelmReleaseRun): Promise<undefined> {
  const { status, placement, ctx } = run;
  const chart = need(run.chart, 'the chart');
  const digest = need(run.configDigest, 'the values');
  const store = new ReleaseStore(need(run.target, 'the target cluster'), {
    namespace: placement.storageNamespace,
    impersonate: run.impersonate,
    now: () => ctx.now(),
  });
  run.store = store;
  let history: ReleaseRecord[];
  try {
    history = await store.history(placement.releaseName);
  } catch (err) {
    if (err instanceof ReleaseRecordError) throw new RetryableError(Reason.ReconciliationFailed, err.message);
    throw err;
  }
  // Never stuck: an operation that was under way when its process died will not finish now.
  const latest = history.at(-1);
  if (latest?.info.status && isPendingStatus(latest.info.status)) {
    const interrupted: ReleaseRecord = {
      ...latest,
      info: {
        ...latest.info,
        status: 'failed',
        last_deployed: helmTime(ctx.now()),
        description: `Release interrupted: ${latest.info.status} of version ${latest.version} did not finish (the operator stopped); marked failed`,
      },
    };
    await store.update(interrupted);
    history[history.length - 1] = interrupted;
    ctx.event(
      'error',
      Reason.ReconciliationFailed,
      `release ${placement.releaseName} v${latest.version} was interrupted; marked failed`,
    );
  }
  run.history = history;
  run.deployed = history.filter((r) => r.info.status === 'deployed').at(-1);

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
  run.action = upToDate ? 'none' : deployed ? 'upgrade' : 'install';
  if (run.action === 'none') return undefined;

  // Out of retries for this very spec: wait for a change rather than fail again and again.
  const spec = run.obj.spec;
  const failures = run.action === 'install' ? (status.installFailures ?? 0) : (status.upgradeFailures ?? 0);
  const retries =
    (run.action === 'install' ? spec.install?.remediation?.retries : spec.upgrade?.remediation?.retries) ?? 0;
  // A rollback the user asked for (or holds) is not another try of this spec: let it through.
  const rollback = run.obj.metadata.annotations?.[ROLLBACK_ANNOTATION];
  const rollbackAsked = !!rollback && rollback !== status.lastHandledRollbackAt;
  if (
    !desiredChanged &&
    !rollbackAsked &&
    !status.rollbackHold &&
    failures > 0 &&
    retriesExhausted(failures, retries)
  ) {
    throw new StalledError(
      Reason.RetriesExceeded,
      `${run.action} of chart ${chart.name}@${chart.version} failed ${failures} times (retries: ${retries}); change the chart or values to try again`,
    );
  }
  return undefined;
}
