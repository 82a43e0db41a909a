/** Base class of every error the OCI client throws, so callers can tell registry trouble from bugs. */
export class RegistryError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The registry refused the credentials, or wants credentials that were not given. Retrying will not help. */
export class RegistryAuthError extends RegistryError {}

/** The registry could not be reached, timed out, failed TLS or answered 5xx. Retrying may help. */
export class RegistryUnavailableError extends RegistryError {}

/** The registry answered something that breaks the distribution protocol (bad JSON, missing fields, wrong types). */
export class RegistryProtocolError extends RegistryError {}

/** The repository, tag, manifest or blob does not exist. */
export class RegistryNotFoundError extends RegistryError {}

/** Content did not hash to (or was not the size of) the digest it was asked for. */
export class DigestMismatchError extends RegistryError {}

/** A blob or manifest is larger than the caller's limit; it was not downloaded. */
export class ContentTooLargeError extends RegistryError {}

/** Writing downloaded content to local disk failed (missing folder, disk full): not the registry's fault. */
export class LocalWriteError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'LocalWriteError';
  }
}
