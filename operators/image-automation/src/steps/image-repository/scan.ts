import { type Step, step } from '@mooring/runtime';
import { DEFAULT_EXCLUSION_LIST, durationMs, type ImageRepositoryRun } from '../../image-repository-run.ts';
import { registryClientFor, registryFailure } from '../../registry-access.ts';
import { need } from '../../run.ts';
import { tagSetRevision } from '../../tag-store.ts';

/** How many of the newest tags the status shows. */
const LATEST_TAGS_SAMPLE = 10;

/** A step of the scan: skipped when the stored tags are fresh. */
export function scanStep(name: string, run: Step<ImageRepositoryRun>['run']): Step<ImageRepositoryRun> {
  return step(name, (r) => (r.fresh ? undefined : run(r)));
}

/** The repository's tags (paginated, with the secretRef's credentials), the excluded ones dropped. */
export async function listTags(run: ImageRepositoryRun): Promise<undefined> {
  const { obj, ctx, deps } = run;
  const ref = need(run.ref, 'the image reference');
  const timeoutMs = durationMs(obj.spec.timeout, run.intervalMs);
  let tags: string[];
  try {
    const registry = await registryClientFor(deps.client, obj, ref, timeoutMs, ctx.deadline(timeoutMs));
    tags = await registry.listTags(ref);
  } catch (err) {
    throw registryFailure(err);
  }
  const exclusions = need(run.exclusions, 'the exclusions');
  run.tags = tags.filter((t) => !exclusions.some((re) => re.test(t)));
  run.revision = tagSetRevision(run.tags);
  ctx.log.debug({ reason: run.due, tags: run.tags.length }, 'scanned');
  return undefined;
}

/** The tags go to disk unless the same set is stored already. */
export async function storeTags(run: ImageRepositoryRun): Promise<undefined> {
  const { status, stored } = run;
  const revision = need(run.revision, 'the tag set revision');
  run.unchanged =
    stored !== undefined &&
    status.lastScanResult?.revision === revision &&
    status.canonicalImageName === run.canonical;
  if (!run.unchanged || tagSetRevision(stored ?? []) !== revision)
    await run.deps.store.write(run.namespace, run.name, need(run.tags, 'the tags'));
  return undefined;
}

/** The newest-looking tags for the status sample: reverse text order, as the list has no dates. */
function sample(tags: readonly string[]): string[] {
  return [...tags].sort().reverse().slice(0, LATEST_TAGS_SAMPLE);
}

/**
 * The scan on the status. The same tag set leaves the scan result alone (scanTime too, unless a
 * reconcile was requested): no status write, no policy wake-up, no event. Next scan at the interval.
 */
export function recordScan(run: ImageRepositoryRun): { requeueAfterMs: number } {
  const { obj, ctx, status, unchanged } = run;
  const tags = need(run.tags, 'the tags');
  const revision = need(run.revision, 'the tag set revision');
  status.canonicalImageName = need(run.canonical, 'the canonical image name');
  status.observedExclusionList = obj.spec.exclusionList ?? DEFAULT_EXCLUSION_LIST;
  if (!unchanged || run.due === 'reconcile requested') {
    status.lastScanResult = {
      revision,
      tagCount: tags.length,
      scanTime: ctx.now().toISOString(),
      latestTags: sample(tags),
    };
  }
  if (!unchanged) ctx.event('info', 'Succeeded', `successful scan: found ${tags.length} tags`, { revision });
  run.result = { message: `successful scan: found ${tags.length} tags`, revision };
  return { requeueAfterMs: run.intervalMs };
}
