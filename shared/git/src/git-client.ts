import { CliGitClient } from './cli-backend.ts';
import { IsomorphicGitClient } from './isomorphic-backend.ts';

/** Credentials for one remote, built by the caller from a Kubernetes Secret. */
export interface GitAuth {
  username?: string;
  password?: string;
  bearerToken?: string;
  /** PEM, for https with a private CA. */
  caCert?: string;
  /** PEM/OpenSSH private key; sshKnownHosts is required with it. */
  sshIdentity?: string;
  sshKnownHosts?: string;
}

/** Which revision to fetch; precedence commit > name > semver > tag > branch, default branch `master`. */
export interface GitRefSpec {
  branch?: string;
  tag?: string;
  semver?: string;
  name?: string;
  commit?: string;
}

/** A ref resolved on the remote. */
export interface ResolvedRef {
  /** 40 hex. */
  commit: string;
  /** e.g. refs/heads/main, refs/tags/v1.2.0. */
  refName?: string;
  /** Flux's format: 'main@sha1:<hex>', 'v1.2.0@sha1:<hex>', 'refs/pull/1/head@sha1:<hex>', 'sha1:<hex>'. */
  revision: string;
}

/** The head commit of a checkout. */
export interface CommitInfo {
  commit: string;
  subject: string;
  author: { name: string; email: string; date: string };
}

/** A raw signed object: the armored signature and the bytes it signs. */
export interface SignedPayload {
  signature: string;
  payload: string;
}

/** What a checkout produced. */
export interface CheckoutResult extends ResolvedRef {
  head: CommitInfo;
  /** The commit's gpgsig and the commit object without it (filled when requested and signed). */
  commitSignature?: SignedPayload;
  /** The annotated tag's signature and the tag object without it (filled when requested, the ref is a tag and it is signed). */
  tagSignature?: SignedPayload;
}

/** Per-call options: credentials, a hard timeout and an optional abort signal. */
export interface GitOperationOptions {
  auth?: GitAuth;
  timeoutMs: number;
  signal?: AbortSignal;
}

/** Extra checkout options. */
export interface CheckoutOptions extends GitOperationOptions {
  /** Only these directories end up in the work tree. */
  sparse?: string[];
  /** Fill commitSignature / tagSignature. */
  withSignatures?: boolean;
}

/** Options for commit signing. */
export interface CommitOptions {
  /** Armored OpenPGP private key. */
  signingKey?: string;
  passphrase?: string;
}

/** The Git operations the operators need, with two interchangeable backends. */
export interface GitClient {
  readonly backend: 'cli' | 'isomorphic';
  /** Cheap: resolve a ref on the remote to a commit without fetching objects. A commit-only ref resolves to itself without network. */
  resolve(url: string, ref: GitRefSpec, opts: GitOperationOptions): Promise<ResolvedRef>;
  /** Shallow fetch of exactly one revision into an empty dir and check it out. */
  checkout(url: string, ref: GitRefSpec, dir: string, opts: CheckoutOptions): Promise<CheckoutResult>;
  /** A working clone of `branch` that can commit and push (for image automation). */
  cloneForWrite(url: string, branch: string, dir: string, opts: GitOperationOptions): Promise<CheckoutResult>;
  /** Stages all changes and commits them; resolves to the new commit, or undefined when nothing changed. */
  commit(
    dir: string,
    message: string,
    author: { name: string; email: string },
    opts?: CommitOptions,
  ): Promise<string | undefined>;
  /** Pushes `refspec` (e.g. 'HEAD:refs/heads/main'); a rejected non-fast-forward throws PushRejectedError. */
  push(dir: string, url: string, refspec: string, opts: GitOperationOptions): Promise<void>;
}

/** Creates a Git client on the `git` command line (every transport) or on isomorphic-git (http/https only). */
export function createGitClient(backend: 'cli' | 'isomorphic'): GitClient {
  return backend === 'cli' ? new CliGitClient() : new IsomorphicGitClient();
}
