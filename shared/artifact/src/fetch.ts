import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseSha256Digest } from './digest.ts';
import {
  ArtifactFetchError,
  ArtifactNotFoundError,
  ArtifactTooLargeError,
  DigestMismatchError,
} from './errors.ts';
import { extractTarGz } from './extract.ts';
import { type ArtifactLimits, DEFAULT_LIMITS, formatBytes } from './limits.ts';
import { ownedTempPrefix, removeStaleTempDirsOnce } from './owned-temp.ts';

/** Extraction limits plus a cap on the compressed download. */
export interface FetchLimits extends ArtifactLimits {
  /** Most bytes downloaded; defaults to the total extraction limit plus 64 MiB for tar overhead. */
  maxDownloadBytes?: number;
}

/** Options for {@link fetchArtifact}. */
export interface FetchArtifactOptions {
  /** `status.artifact.url` of the source. */
  url: string;
  /** `status.artifact.digest`; only `sha256:<hex>` is supported. */
  digest: string;
  /** Where to extract; must not exist or be empty. A fresh temp dir when left out. */
  destDir?: string;
  limits?: FetchLimits;
  /** Retries after the first attempt, on network errors, timeouts and 5xx (never on 4xx). */
  retries?: number;
  /** First backoff delay; doubles per retry up to 5 s, with jitter. */
  retryBaseMs?: number;
  /** Deadline for one attempt, headers and body together. */
  timeoutMs?: number;
  /** Cancels the whole fetch, retries included. */
  signal?: AbortSignal;
  /** Directory for the temporary download (default: the OS temp dir). */
  workDir?: string;
  /** Replaces the global fetch (tests, proxies, instrumentation). */
  fetchImpl?: typeof fetch;
}

/** A verified, extracted artifact. */
export interface FetchedArtifact {
  /** Directory holding the artifact's files. */
  dir: string;
  /** Bytes downloaded (the tar.gz size). */
  bytes: number;
  /** Regular files extracted. */
  files: number;
  /** Bytes of file content extracted. */
  extractedBytes: number;
  /** Removes `dir`. */
  cleanup(): Promise<void>;
}

const MAX_BACKOFF_MS = 5000;

/**
 * Downloads an artifact with bounded retries, verifies its sha256 digest before anything is extracted,
 * then extracts it safely. 404 throws {@link ArtifactNotFoundError} (the consumer should requeue).
 */
export async function fetchArtifact(options: FetchArtifactOptions): Promise<FetchedArtifact> {
  const expectedHex = parseSha256Digest(options.digest);
  const parsed = URL.parse(options.url);
  if (!parsed || !/^https?:$/.test(parsed.protocol)) {
    throw new ArtifactFetchError(`artifact URL ${redactUrl(options.url)} is not a valid http(s) URL`);
  }
  if (parsed.username || parsed.password) {
    throw new ArtifactFetchError(`artifact URL ${redactUrl(options.url)} must not carry credentials`);
  }
  const retries = options.retries ?? 3;
  const maxDownload =
    options.limits?.maxDownloadBytes ??
    (options.limits?.maxTotalBytes ?? DEFAULT_LIMITS.maxTotalBytes) + 64 * 1024 * 1024;
  const shownUrl = redactUrl(options.url);
  const workParent = options.workDir ?? tmpdir();
  // Temp dirs carry this process's pid and start time; the first fetch after a start removes the
  // ones a crashed predecessor left (a SIGKILL runs no `finally`).
  await removeStaleTempDirsOnce(workParent);
  if (options.destDir === undefined) await removeStaleTempDirsOnce(tmpdir());
  const work = await mkdtemp(join(workParent, ownedTempPrefix('fetch')));
  try {
    const file = join(work, 'artifact.tar.gz');
    const downloaded = await downloadWithRetries(options, file, maxDownload, retries, shownUrl);
    if (downloaded.hex !== expectedHex) {
      throw new DigestMismatchError(options.digest, `sha256:${downloaded.hex}`, shownUrl);
    }
    const dir = options.destDir ?? (await mkdtemp(join(tmpdir(), ownedTempPrefix('artifact'))));
    const extracted = await extractTarGz(file, dir, options.limits).catch(async (err: unknown) => {
      if (options.destDir === undefined) await rm(dir, { recursive: true, force: true });
      throw err;
    });
    return {
      dir: extracted.dir,
      bytes: downloaded.size,
      files: extracted.files,
      extractedBytes: extracted.bytes,
      cleanup: () => rm(extracted.dir, { recursive: true, force: true }),
    };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

async function downloadWithRetries(
  options: FetchArtifactOptions,
  file: string,
  maxDownload: number,
  retries: number,
  shownUrl: string,
): Promise<{ hex: string; size: number }> {
  const baseMs = options.retryBaseMs ?? 500;
  let lastReason = '';
  let lastStatus: number | undefined;
  let lastCause: unknown;
  for (let attempt = 0; attempt <= retries; attempt++) {
    if (attempt > 0) {
      // Exponential with jitter in [50%, 100%] so consumers of one source do not retry in lockstep.
      const delay = Math.min(MAX_BACKOFF_MS, baseMs * 2 ** (attempt - 1)) * (0.5 + Math.random() / 2);
      await sleep(delay, undefined, { signal: options.signal });
    }
    options.signal?.throwIfAborted();
    try {
      const outcome = await downloadOnce(options, file, maxDownload, shownUrl);
      if ('hex' in outcome) return outcome;
      if (outcome.status === 404) throw new ArtifactNotFoundError(shownUrl);
      if (outcome.status < 500) {
        throw new ArtifactFetchError(
          `fetching artifact ${shownUrl} failed: HTTP ${outcome.status}`,
          outcome.status,
        );
      }
      lastReason = `HTTP ${outcome.status}`;
      lastStatus = outcome.status;
      lastCause = undefined;
    } catch (err) {
      if (err instanceof ArtifactNotFoundError || err instanceof ArtifactFetchError) throw err;
      if (err instanceof ArtifactTooLargeError) throw err;
      // The caller gave up: no retry, and its own reason goes back to it.
      if (options.signal?.aborted) throw options.signal.reason;
      // The raw URL may carry a token in its query; only the redacted form reaches messages.
      lastReason = describeNetworkError(err, options.timeoutMs).split(options.url).join(shownUrl);
      lastStatus = undefined;
      lastCause = err;
    }
  }
  throw new ArtifactFetchError(
    `fetching artifact ${shownUrl} failed after ${retries + 1} attempts: ${lastReason}`,
    lastStatus,
    lastCause instanceof Error
      ? { name: lastCause.name, code: (lastCause.cause as NodeJS.ErrnoException)?.code }
      : undefined,
  );
}

/** One GET; returns the digest of what was written, or the status when the server said no. */
async function downloadOnce(
  options: FetchArtifactOptions,
  file: string,
  maxDownload: number,
  shownUrl: string,
): Promise<{ hex: string; size: number } | { status: number }> {
  // Not AbortSignal.timeout: inside AbortSignal.any, Node 20 lets it be collected with its timer,
  // and the download then never times out. This timer holds its controller until cleared.
  const timeout = new AbortController();
  const timer = setTimeout(
    () => timeout.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')),
    options.timeoutMs ?? 60_000,
  );
  const signal = options.signal ? AbortSignal.any([options.signal, timeout.signal]) : timeout.signal;
  try {
    const res = await (options.fetchImpl ?? fetch)(options.url, { signal });
    if (!res.ok || !res.body) {
      await res.body?.cancel().catch(() => {});
      return { status: res.status };
    }
    const declared = Number(res.headers.get('content-length') ?? Number.NaN);
    if (declared > maxDownload) {
      await res.body.cancel().catch(() => {});
      throw tooLarge(shownUrl, maxDownload);
    }
    const hash = createHash('sha256');
    let size = 0;
    const tap = new Transform({
      transform(chunk: Buffer, _enc, cb) {
        size += chunk.length;
        if (size > maxDownload) return cb(tooLarge(shownUrl, maxDownload));
        hash.update(chunk);
        cb(null, chunk);
      },
    });
    // A fresh file per attempt ('w' truncates), so a half download never mixes into the next one.
    await pipeline(Readable.fromWeb(res.body as WebReadableStream<Uint8Array>), tap, createWriteStream(file));
    return { hex: hash.digest('hex'), size };
  } finally {
    clearTimeout(timer);
  }
}

function tooLarge(url: string, limit: number): ArtifactTooLargeError {
  return new ArtifactTooLargeError(
    `artifact ${url} is larger than the download limit of ${formatBytes(limit)}`,
    limit,
  );
}

function describeNetworkError(err: unknown, timeoutMs: number | undefined): string {
  if (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError')) {
    return `timed out after ${timeoutMs ?? 60_000} ms`;
  }
  const cause = err instanceof Error ? (err.cause as NodeJS.ErrnoException | undefined) : undefined;
  if (cause?.code) return cause.code;
  return err instanceof Error ? err.message : String(err);
}

/** The URL without credentials or query string, safe for messages and logs. */
function redactUrl(raw: string): string {
  try {
    const u = new URL(raw);
    u.username = '';
    u.password = '';
    u.search = '';
    u.hash = '';
    return u.toString();
  } catch {
    return '(invalid URL)';
  }
}
