import type { ImageRepository } from '@mooring/api';
import type { OciReference } from '@mooring/oci';
import { type KubeClient, parseDuration, type ReconcileContext } from '@mooring/runtime';
import type { RunResult } from './run.ts';
import type { TagStore } from './tag-store.ts';

/** Flux's default: cosign signatures are not images. */
export const DEFAULT_EXCLUSION_LIST = ['^.*\\.sig$'];

/** A duration from the spec, or `fallback` when unset or unreadable. */
export function durationMs(value: string | undefined, fallback: number): number {
  if (!value) return fallback;
  try {
    return parseDuration(value);
  } catch {
    return fallback;
  }
}

export interface ImageRepositoryDeps {
  client: KubeClient;
  store: TagStore;
}

/**
 * One reconcile of one ImageRepository: what the steps in ./steps/image-repository read and what
 * each adds for the next. Fields a step fills are optional until then.
 */
export interface ImageRepositoryRun {
  readonly obj: ImageRepository;
  readonly ctx: ReconcileContext;
  readonly status: NonNullable<ImageRepository['status']>;
  readonly deps: ImageRepositoryDeps;
  /** Where the tags are stored. */
  readonly namespace: string;
  readonly name: string;
  /** `spec.interval` (5m when unset or unreadable). */
  readonly intervalMs: number;
  ref?: OciReference;
  /** `host/repository`, as the status names the image. */
  canonical?: string;
  exclusions?: RegExp[];
  /** The tags stored by the last scan; undefined when there are none. */
  stored?: string[];
  /** Why this reconcile scans; undefined when the stored tags are fresh and the scan steps are skipped. */
  due?: string;
  /** The stored tags are fresh: the scan steps are skipped. */
  fresh?: boolean;
  /** The tags the scan found, exclusions dropped. */
  tags?: string[];
  revision?: string;
  /** The scan found the tag set the status already records, for the same image. */
  unchanged?: boolean;
  result?: RunResult;
}
