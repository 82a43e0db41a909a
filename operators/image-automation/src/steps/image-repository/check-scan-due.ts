import type { ImageRepository } from '@mooring/api';
import { REQUESTED_AT_ANNOTATION, type StepOutcome } from '@mooring/runtime';
import { DEFAULT_EXCLUSION_LIST, type ImageRepositoryRun } from '../../image-repository-run.ts';
import { need } from '../../run.ts';

/** Why a scan is due now, or undefined when the stored tags are still fresh. */
function scanDue(
  repo: ImageRepository,
  canonical: string,
  stored: string[] | undefined,
  intervalMs: number,
  now: Date,
): string | undefined {
  const status = repo.status;
  const last = status?.lastScanResult;
  if (!last?.scanTime || !stored) return 'never scanned';
  const requested = repo.metadata.annotations?.[REQUESTED_AT_ANNOTATION];
  if (requested !== undefined && requested !== status?.lastHandledReconcileAt) return 'reconcile requested';
  if (status?.canonicalImageName !== canonical) return 'image changed';
  if (
    JSON.stringify(status?.observedExclusionList ?? null) !==
    JSON.stringify(repo.spec.exclusionList ?? DEFAULT_EXCLUSION_LIST)
  )
    return 'exclusion list changed';
  if (now.getTime() - Date.parse(last.scanTime) >= intervalMs) return 'interval elapsed';
  return undefined;
}

/** The tags stored by the last scan, read from disk. */
export async function readStoredTags(run: ImageRepositoryRun): Promise<undefined> {
  run.stored = await run.deps.store.read(run.namespace, run.name);
  return undefined;
}

/**
 * Whether to scan: never scanned, a reconcile requested, the image or the exclusion list changed,
 * or the interval elapsed. Otherwise the stored tags are fresh: the last scan result is reported,
 * the scan steps are skipped, and the next reconcile comes when the interval ends.
 */
export function checkScanDue(run: ImageRepositoryRun): StepOutcome | undefined {
  const { obj, ctx, status, intervalMs } = run;
  run.due = scanDue(obj, need(run.canonical, 'the canonical image name'), run.stored, intervalMs, ctx.now());
  if (run.due) return undefined;
  const last = status.lastScanResult!;
  const left = intervalMs - (ctx.now().getTime() - Date.parse(last.scanTime!));
  run.fresh = true;
  run.result = { message: `successful scan: found ${last.tagCount} tags`, revision: last.revision };
  return { requeueAfterMs: Math.max(1000, left) };
}
