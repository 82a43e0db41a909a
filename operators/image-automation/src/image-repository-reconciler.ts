import { FINALIZER, IMAGE_API_VERSION, type ImageRepository, Reason } from '@mooring/api';
import { imageReference, type OciReference } from '@mooring/oci';
import {
  type KubeClient,
  parseDuration,
  REQUESTED_AT_ANNOTATION,
  type ReconcileResult,
  type Reconciler,
  StalledError,
  timeoutSignal,
} from '@mooring/runtime';
import { compilePattern, InvalidPolicyError } from './policy.ts';
import { registryClientFor, registryFailure } from './registry-access.ts';
import { type TagStore, tagSetRevision } from './tag-store.ts';

/** Flux's default: cosign signatures are not images. */
export const DEFAULT_EXCLUSION_LIST = ['^.*\\.sig$'];
/** How many of the newest tags the status shows. */
const LATEST_TAGS_SAMPLE = 10;

export interface ImageRepositoryDeps {
  client: KubeClient;
  store: TagStore;
}

function durationMs(value: string | undefined, fallback: number): number {
  if (!value) return fallback;
  try {
    return parseDuration(value);
  } catch {
    return fallback;
  }
}

/** The image reference, or a Stalled ImageURLInvalid: a bad name will not fix itself. */
export function imageRefOf(repo: ImageRepository): OciReference {
  try {
    return imageReference(repo.spec.image);
  } catch (err) {
    throw new StalledError(Reason.ImageURLInvalid, (err as Error).message.replace(/\.$/, ''));
  }
}

function exclusionsOf(repo: ImageRepository): RegExp[] {
  const list = repo.spec.exclusionList ?? DEFAULT_EXCLUSION_LIST;
  try {
    return list.map((p) => compilePattern(p, 'exclusionList entry'));
  } catch (err) {
    if (err instanceof InvalidPolicyError) throw new StalledError('InvalidExclusionList', err.message);
    throw err;
  }
}

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

/** The newest-looking tags for the status sample: reverse text order, as the list has no dates. */
function sample(tags: readonly string[]): string[] {
  return [...tags].sort().reverse().slice(0, LATEST_TAGS_SAMPLE);
}

/**
 * ImageRepository: list the repository's tags (paginated, with token or basic auth), drop the
 * excluded ones, store them on disk and report the tag set's revision. A scan that finds the same
 * set writes nothing, so ImagePolicies are only woken by real changes.
 */
export function imageRepositoryReconciler(deps: ImageRepositoryDeps): Reconciler<ImageRepository> {
  return {
    apiVersion: IMAGE_API_VERSION,
    kind: 'ImageRepository',
    finalizer: FINALIZER,
    defaultIntervalMs: 5 * 60_000,

    async reconcile(repo, ctx): Promise<ReconcileResult> {
      const status = ctx.status as NonNullable<ImageRepository['status']>;
      const namespace = repo.metadata.namespace ?? 'default';
      const name = repo.metadata.name ?? '';
      if (repo.spec.provider && repo.spec.provider !== 'generic') {
        throw new StalledError(
          'InvalidProviderConfiguration',
          `provider '${repo.spec.provider}' is not supported yet; use a secretRef with registry credentials`,
        );
      }
      if (repo.spec.proxySecretRef || repo.spec.serviceAccountName) {
        throw new StalledError(
          'UnsupportedConfiguration',
          'proxySecretRef and serviceAccountName are not supported yet; use secretRef',
        );
      }
      const ref = imageRefOf(repo);
      const canonical = `${ref.host}/${ref.repository}`;
      const exclusions = exclusionsOf(repo);
      const intervalMs = durationMs(repo.spec.interval, 5 * 60_000);
      const stored = await deps.store.read(namespace, name);
      const due = scanDue(repo, canonical, stored, intervalMs, ctx.now());
      if (!due) {
        const last = status.lastScanResult!;
        const left = intervalMs - (ctx.now().getTime() - Date.parse(last.scanTime!));
        return {
          message: `successful scan: found ${last.tagCount} tags`,
          requeueAfterMs: Math.max(1000, left),
          revision: last.revision,
        };
      }

      const timeoutMs = durationMs(repo.spec.timeout, intervalMs);
      const signal = AbortSignal.any([timeoutSignal(timeoutMs), ctx.signal]);
      let tags: string[];
      try {
        const registry = await registryClientFor(deps.client, repo, ref, timeoutMs, signal);
        tags = await registry.listTags(ref);
      } catch (err) {
        throw registryFailure(err);
      }
      tags = tags.filter((t) => !exclusions.some((re) => re.test(t)));
      const revision = tagSetRevision(tags);
      ctx.log.debug({ reason: due, tags: tags.length }, 'scanned');

      const unchanged =
        stored !== undefined &&
        status.lastScanResult?.revision === revision &&
        status.canonicalImageName === canonical;
      if (!unchanged || tagSetRevision(stored ?? []) !== revision)
        await deps.store.write(namespace, name, tags);
      status.canonicalImageName = canonical;
      status.observedExclusionList = repo.spec.exclusionList ?? DEFAULT_EXCLUSION_LIST;
      // The same tag set leaves the scan result alone (scanTime too): no status write, no policy wake-up.
      if (!unchanged || due === 'reconcile requested') {
        status.lastScanResult = {
          revision,
          tagCount: tags.length,
          scanTime: ctx.now().toISOString(),
          latestTags: sample(tags),
        };
      }
      if (!unchanged) {
        ctx.event('info', 'Succeeded', `successful scan: found ${tags.length} tags`, { revision });
      }
      return { message: `successful scan: found ${tags.length} tags`, revision, requeueAfterMs: intervalMs };
    },

    async finalize(repo) {
      await deps.store.remove(repo.metadata.namespace ?? 'default', repo.metadata.name ?? '');
    },
  };
}
