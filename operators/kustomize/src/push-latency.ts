import { type Artifact, WEBHOOK_ACCEPTED_AT_ANNOTATION } from '@mooring/api';
import { type KubeObject, parseDuration } from '@mooring/runtime';

/** Used when the source's interval cannot be read. */
const FALLBACK_INTERVAL_MS = 10 * 60_000;

/**
 * Seconds from the webhook a Receiver accepted for `source` to `appliedAt`, when the artifact just
 * applied is the one that webhook's fetch stored; else undefined. The artifact counts as the
 * webhook's when it was stored at or after the webhook was accepted and sooner than the source's
 * next interval fetch could have come: a later artifact came from a fetch the webhook did not ask
 * for (its push changed nothing this source tracks), and is not timed against it.
 */
export function pushToAppliedSeconds(
  source: KubeObject,
  applied: Artifact,
  appliedAt: Date,
): number | undefined {
  const accepted = Date.parse(source.metadata.annotations?.[WEBHOOK_ACCEPTED_AT_ANNOTATION] ?? '');
  const stored = Date.parse(applied.lastUpdateTime ?? '');
  if (Number.isNaN(accepted) || Number.isNaN(stored)) return undefined;
  // lastUpdateTime may have whole seconds only: an artifact stored in the webhook's second counts.
  if (stored < Math.floor(accepted / 1000) * 1000) return undefined;
  if (stored - accepted >= intervalMs(source)) return undefined;
  const seconds = (appliedAt.getTime() - accepted) / 1000;
  return seconds >= 0 ? seconds : undefined;
}

function intervalMs(source: KubeObject): number {
  const interval = (source as { spec?: { interval?: unknown } }).spec?.interval;
  if (typeof interval !== 'string') return FALLBACK_INTERVAL_MS;
  try {
    return parseDuration(interval);
  } catch {
    return FALLBACK_INTERVAL_MS;
  }
}
