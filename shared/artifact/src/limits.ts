/** Size and count limits shared by packing, extracting and fetching. */
export interface ArtifactLimits {
  /** Largest single regular file, in bytes. */
  maxFileBytes?: number;
  /** Sum of all regular file sizes, in bytes (uncompressed). */
  maxTotalBytes?: number;
  /** Most entries (files and directories) in one archive. */
  maxEntries?: number;
}

const MiB = 1024 * 1024;

/**
 * Defaults: Flux caps extraction at 100 MiB in total; Mooring allows 100 MiB per file and 512 MiB in
 * total so that a repository with one large generated manifest still packs, while a 200 MB binary
 * committed by mistake is refused with a message naming it. Producer and consumer share these
 * numbers so that whatever the source packs by default, a consumer extracts by default.
 */
export const DEFAULT_LIMITS: Readonly<Required<ArtifactLimits>> = Object.freeze({
  maxFileBytes: 100 * MiB,
  maxTotalBytes: 512 * MiB,
  maxEntries: 100_000,
});

/** Fills unset limits with the defaults and rejects nonsense values. */
export function resolveLimits(limits: ArtifactLimits | undefined): Required<ArtifactLimits> {
  const out = { ...DEFAULT_LIMITS, ...stripUndefined(limits ?? {}) };
  for (const [key, value] of Object.entries(out)) {
    if (!Number.isSafeInteger(value) || value < 0) {
      throw new RangeError(`artifact limit ${key} must be a non-negative integer, got ${String(value)}`);
    }
  }
  return out;
}

/** Human-readable byte count for error messages (`104857600` → `100 MiB`). */
export function formatBytes(n: number): string {
  if (n >= MiB && n % MiB === 0) return `${n / MiB} MiB`;
  if (n >= MiB) return `${(n / MiB).toFixed(1)} MiB`;
  if (n >= 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${n} bytes`;
}

function stripUndefined(o: ArtifactLimits): ArtifactLimits {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}
