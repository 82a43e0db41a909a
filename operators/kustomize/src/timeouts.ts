import type { Kustomization } from '@mooring/api';
import { parseDuration } from '@mooring/runtime';

const FLOOR_MS = 30_000;

function duration(text: string | undefined): number | undefined {
  if (!text) return undefined;
  try {
    return parseDuration(text);
  } catch {
    return undefined;
  }
}

/** `spec.interval`, `spec.retryInterval` (interval by default) and `spec.timeout` (interval − 30s, at least 30s, as Flux). */
export function kustomizationTimings(obj: Kustomization): {
  intervalMs: number;
  retryIntervalMs: number;
  timeoutMs: number;
} {
  const intervalMs = duration(obj.spec.interval) ?? 600_000;
  const retryIntervalMs = duration(obj.spec.retryInterval) ?? intervalMs;
  const timeoutMs = Math.max(FLOOR_MS, duration(obj.spec.timeout) ?? intervalMs - FLOOR_MS);
  return { intervalMs, retryIntervalMs, timeoutMs };
}
