// Where the release stands: its records in the storage namespace (Helm's own, whoever wrote them),
// and an operation left pending by a process that died marked failed so the release can proceed.
// What to do about it is the next step's (./decide-action.ts).
import { HELM_NAME_LABEL, HELM_NAMESPACE_LABEL, Reason } from '@mooring/api';
import {
  helmTime,
  isPendingStatus,
  type ReleaseRecord,
  ReleaseRecordError,
  ReleaseStore,
} from '@mooring/helm';
import { RetryableError } from '@mooring/runtime';
import { type HelmReleaseRun, need } from '../helm-release-run.ts';

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
  const { placement, ctx } = run;
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
  return undefined;
}
