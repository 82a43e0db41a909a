/** Anything that went wrong talking to Git that no narrower class below describes. */
export class GitError extends Error {
  override name = 'GitError';
}

/** The remote refused the credentials (HTTP 401/403, SSH permission denied) or the SSH host key did not match. */
export class GitAuthError extends GitError {
  override name = 'GitAuthError';
}

/** The requested branch, tag, semver range, ref name or commit does not exist on the remote. */
export class GitRefNotFoundError extends GitError {
  override name = 'GitRefNotFoundError';
  readonly ref: string;
  constructor(message: string, ref: string) {
    super(message);
    this.ref = ref;
  }
}

/** The operation ran past its timeout or was aborted through its AbortSignal. */
export class GitTimeoutError extends GitError {
  override name = 'GitTimeoutError';
}

/** The remote rejected a push, typically because the branch moved (non-fast-forward). */
export class PushRejectedError extends GitError {
  override name = 'PushRejectedError';
}
