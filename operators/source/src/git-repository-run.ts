import type { GitRepository } from '@mooring/api';
import type { ArtifactStorage } from '@mooring/artifact';
import type { CheckoutResult, GitAuth, GitClient, GitRefSpec } from '@mooring/git';
import type { KubeClient } from '@mooring/runtime';
import type { ResolvedInclude } from './include.ts';
import type { SourceRun } from './source-run.ts';

export interface GitRepositoryDeps {
  client: KubeClient;
  storage: ArtifactStorage;
  storageRoot: string;
  git: GitClient;
  /** Largest single file and whole artifact a repository may produce. */
  limits: { maxFileBytes: number; maxTotalBytes: number };
}

/**
 * One reconcile of one GitRepository: what the steps in ./steps/git-repository read and what each
 * adds for the next.
 */
export interface GitRepositoryRun extends SourceRun<NonNullable<GitRepository['status']>> {
  readonly obj: GitRepository;
  readonly deps: GitRepositoryDeps;
  auth?: GitAuth;
  includes?: ResolvedInclude[];
  /** The commit checked out into `scratch`. */
  checkout?: CheckoutResult;
}

type VerifyMode = 'HEAD' | 'Tag' | 'TagAndHEAD';

/** The ref to fetch, Flux's default branch when none is given. */
export function refOf(obj: GitRepository): GitRefSpec {
  const ref = obj.spec.ref ?? {};
  return Object.values(ref).some((v) => v) ? ref : { branch: 'master' };
}

/** The signature check `spec.verify` asks for, in the status's spelling; undefined for none. */
export function verifyModeOf(obj: GitRepository): VerifyMode | undefined {
  const mode = obj.spec.verify?.mode;
  if (!obj.spec.verify) return undefined;
  return !mode || mode === 'head' ? 'HEAD' : mode;
}
