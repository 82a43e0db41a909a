import { createHash } from 'node:crypto';
import type { ReleaseSnapshot } from '@mooring/api';
import type { ReleaseRecord } from '@mooring/helm';
import { type HelmReleaseRun, need } from '../helm-release-run.ts';
import { configDigest } from '../values.ts';

const HISTORY_LIMIT = 5;

/** Flux's snapshot of one release record for status.history. */
export function snapshotOf(record: ReleaseRecord, storageNamespace: string): ReleaseSnapshot {
  const meta = record.chart?.metadata ?? {};
  return {
    name: record.name,
    namespace: storageNamespace,
    version: record.version,
    status: record.info.status ?? 'unknown',
    chartName: meta.name ?? '',
    chartVersion: meta.version ?? '',
    ...(meta.appVersion ? { appVersion: meta.appVersion } : {}),
    configDigest: configDigest(record.config ?? {}),
    digest: `sha256:${createHash('sha256')
      .update(record.manifest ?? '')
      .digest('hex')}`,
    firstDeployed: record.info.first_deployed || record.info.last_deployed || '',
    lastDeployed: record.info.last_deployed || '',
    ...(record.info.deleted ? { deleted: record.info.deleted } : {}),
  } as ReleaseSnapshot;
}

/** Helm's records of the release, newest first, onto status.history. */
export async function recordHistory(run: HelmReleaseRun): Promise<void> {
  const store = need(run.store, 'the release store');
  const history = await store.history(run.placement.releaseName);
  run.status.storageNamespace = run.placement.storageNamespace;
  run.status.history = history
    .slice(-HISTORY_LIMIT)
    .reverse()
    .map((r) => snapshotOf(r, run.placement.storageNamespace));
}

/** The release history on the status, newest first; requeue at the interval. */
export async function recordStatus(run: HelmReleaseRun): Promise<{ requeueAfterMs: number }> {
  await recordHistory(run);
  return { requeueAfterMs: run.intervalMs };
}
