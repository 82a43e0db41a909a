import { kindApiVersion, SOURCE_KINDS } from '@mooring/api';
import type { KubeObject } from '@mooring/runtime';
import { type KustomizationRun, need } from '../kustomization-run.ts';
import { pushToAppliedSeconds } from '../push-latency.ts';

/**
 * A revision applied for the first time is timed from the webhook that fetched it
 * (`mooring_push_to_applied_seconds`). Reads the source once per new revision (from the informer
 * when it holds it); a metric never
 * fails a reconcile, so a failed read is only a missed sample.
 */
export async function timePush(run: KustomizationRun): Promise<undefined> {
  const metrics = run.ctx.metrics;
  const source = need(run.source, 'the source');
  const kind = SOURCE_KINDS.find((k) => k === source.kind);
  if (!metrics?.observePushToApplied || !kind || run.status.lastAppliedRevision === source.artifact.revision)
    return undefined;
  try {
    // The informer's copy when it has the source: its artifact is the one this pass applied.
    const live =
      run.ctx.cache?.get(source.kind, source.namespace, source.name) ??
      (await run.deps.client.get<KubeObject>({
        apiVersion: kindApiVersion(kind),
        kind: source.kind,
        namespace: source.namespace,
        name: source.name,
      }));
    const seconds = pushToAppliedSeconds(live, source.artifact, run.ctx.now());
    if (seconds !== undefined)
      metrics.observePushToApplied(run.obj.metadata.namespace ?? '', run.obj.metadata.name ?? '', seconds);
  } catch (err) {
    run.ctx.log.debug(
      { err: (err as Error).message },
      'push-to-applied not timed: the source could not be read',
    );
  }
  return undefined;
}
