/** A size, count or download limit was exceeded while packing, fetching or extracting an artifact. */
export class ArtifactTooLargeError extends Error {
  /** The limit that was hit, in bytes or entries. */
  readonly limit: number;

  constructor(message: string, limit: number) {
    super(message);
    this.name = 'ArtifactTooLargeError';
    this.limit = limit;
  }
}

/** An archive entry broke a safety rule (path escape, link, device, duplicate, malformed tar). */
export class UnsafeArchiveError extends Error {
  /** The entry name as found in the archive (or `(archive)` for stream-level faults). */
  readonly entry: string;
  /** The rule the entry broke. */
  readonly rule: string;

  constructor(entry: string, rule: string) {
    super(`unsafe archive entry ${JSON.stringify(entry)}: ${rule}`);
    this.name = 'UnsafeArchiveError';
    this.entry = entry;
    this.rule = rule;
  }
}

/** The artifact server answered 404: the source has not produced (or has collected) this artifact yet. */
export class ArtifactNotFoundError extends Error {
  readonly url: string;

  constructor(url: string) {
    super(`artifact not found at ${url}; the source may not have stored it yet, retry later`);
    this.name = 'ArtifactNotFoundError';
    this.url = url;
  }
}

/** The downloaded bytes do not hash to the digest the source advertised; nothing was extracted. */
export class DigestMismatchError extends Error {
  readonly expected: string;
  readonly actual: string;

  constructor(expected: string, actual: string, url: string) {
    super(`artifact digest mismatch for ${url}: expected ${expected}, got ${actual}`);
    this.name = 'DigestMismatchError';
    this.expected = expected;
    this.actual = actual;
  }
}

/** The digest names an algorithm this library does not verify (only sha256 is supported), or is malformed. */
export class UnsupportedDigestError extends Error {
  constructor(digest: string) {
    // Only the algorithm part is echoed: the value is not secret, but it may be long garbage.
    const algo = digest.includes(':') ? digest.slice(0, digest.indexOf(':')).slice(0, 32) : '(none)';
    super(
      algo === 'sha256'
        ? 'malformed artifact digest: expected "sha256:" followed by 64 lowercase hex digits'
        : `unsupported artifact digest algorithm ${JSON.stringify(algo)}; expected "sha256:<64 hex>"`,
    );
    this.name = 'UnsupportedDigestError';
  }
}

/** Fetching an artifact failed for a reason other than 404, digest or size (4xx, retries used up). */
export class ArtifactFetchError extends Error {
  /** The last HTTP status seen, if any. */
  readonly statusCode: number | undefined;

  constructor(message: string, statusCode?: number, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'ArtifactFetchError';
    this.statusCode = statusCode;
  }
}

/** An artifact reference (kind, namespace, name) or path would not stay inside the storage root. */
export class InvalidArtifactRefError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidArtifactRefError';
  }
}
