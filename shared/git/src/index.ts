export { gitAuthFromSecret, InvalidGitCredentialsError } from './credentials.ts';
export { GitAuthError, GitError, GitRefNotFoundError, GitTimeoutError, PushRejectedError } from './errors.ts';
export {
  type CheckoutOptions,
  type CheckoutResult,
  type CommitInfo,
  type CommitOptions,
  createGitClient,
  type GitAuth,
  type GitClient,
  type GitOperationOptions,
  type GitRefSpec,
  type ResolvedRef,
  type SignedPayload,
} from './git-client.ts';
export { redactUrl } from './redact.ts';
export { pickSemverTag, refTarget } from './refs.ts';
export {
  type CheckoutVerification,
  type FailedVerification,
  type SignatureVerification,
  type VerificationMode,
  type VerifiedSignature,
  verifyCheckout,
  verifySignature,
} from './verify-signature.ts';
