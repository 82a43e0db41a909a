import type { HistorySnapshot } from '@mooring/api';
import { type KustomizationRun, need } from '../kustomization-run.ts';

const HISTORY_LIMIT = 5;

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

/** The revision is applied: the revisions and the history of renders on the status; requeue at the interval. */
export function recordSuccess(run: KustomizationRun): { requeueAfterMs: number } {
  const { status, ctx } = run;
  const source = need(run.source, 'the source');
  const revision = source.artifact.revision;
  status.lastAppliedRevision = revision;
  const origin = source.artifact.metadata?.['org.opencontainers.image.revision'];
  if (origin) status.lastAppliedOriginRevision = origin;
  status.history = recordHistory(status.history, {
    digest: need(run.rendered, 'the render').digest,
    status: 'ReconciliationSucceeded',
    revision,
    durationMs: performance.now() - run.started,
    now: ctx
      .now()
      .toISOString()
      .replace(/\.\d+Z$/, 'Z'),
  });
  return { requeueAfterMs: run.timings.intervalMs };
}
