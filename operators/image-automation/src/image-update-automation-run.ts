import type { GitRepository, ImageRef, ImageUpdateAutomation } from '@mooring/api';
import type { CheckoutResult, CommitOptions, GitAuth, GitClient } from '@mooring/git';
import type { KubeClient, ReconcileContext } from '@mooring/runtime';
import type { RunResult } from './run.ts';
import type { PolicyImage } from './setters.ts';
import type { UpdateOutcome } from './update-files.ts';

export interface ImageUpdateAutomationDeps {
  client: KubeClient;
  git: GitClient;
  noCrossNamespaceRefs: boolean;
  dependencyRequeueMs: number;
  /** Tries at a push the remote rejects because the branch moved; each starts from a fresh clone. */
  maxPushAttempts?: number;
}

/** One try at clone, update, commit and push: what the attempt steps read and add. */
export interface PushAttempt {
  /** The clone, removed when the attempt ends. */
  readonly dir: string;
  readonly opts: { auth: GitAuth | undefined; timeoutMs: number; signal: AbortSignal };
  checkout?: CheckoutResult;
  update?: UpdateOutcome;
  /** The commit made, when the update changed files and there was something to commit. */
  commit?: string;
  /** The commit's message. */
  message?: string;
  /** The commit is on the remote branch. */
  pushed?: boolean;
}

/**
 * One reconcile of one ImageUpdateAutomation: what the steps in ./steps/image-update-automation
 * read and what each adds for the next. Fields a step fills are optional until then.
 */
export interface ImageUpdateAutomationRun {
  readonly obj: ImageUpdateAutomation;
  readonly ctx: ReconcileContext;
  readonly status: NonNullable<ImageUpdateAutomation['status']>;
  readonly deps: ImageUpdateAutomationDeps;
  readonly namespace: string;
  /** The GitRepository `spec.sourceRef` names, and its namespace. */
  repo?: GitRepository;
  sourceNamespace?: string;
  auth?: GitAuth;
  /** The branch cloned when the push branch does not exist yet, and the one pushed to. */
  branches?: { checkout: string; push: string };
  /** How commits are signed (`spec.git.commit.signingKey`). */
  signing?: CommitOptions;
  /** Ready ImagePolicies the selector picks, by name. */
  policies?: Map<string, ImageRef>;
  /** The same images keyed as `$imagepolicy` markers name them (`<namespace>:<policy>`). */
  images?: Map<string, PolicyImage>;
  /** The attempt that succeeded (or the one under way). */
  attempt?: PushAttempt;
  result?: RunResult;
}
