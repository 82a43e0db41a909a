import type { Artifact, GitRepository } from '@mooring/api';
import type { GitRepositoryRun } from '../../git-repository-run.ts';
import type { ResolvedInclude } from '../../include.ts';
import { need } from '../../source-run.ts';

/** What the artifact is built from, beyond its revision: a change means building again. */
function builtFrom(obj: GitRepository, includes: ResolvedInclude[]): string {
  return JSON.stringify({
    ignore: obj.spec.ignore ?? null,
    sparse: obj.spec.sparseCheckout ?? [],
    include: obj.spec.include ?? [],
    included: includes.map((i) => i.artifact.digest),
    verify: obj.spec.verify?.mode ?? null,
  });
}

/** The same, as the status records it for the stored artifact. */
function observedFrom(status: GitRepository['status'], included: Artifact[] | undefined): string {
  return JSON.stringify({
    ignore: status?.observedIgnore ?? null,
    sparse: status?.observedSparseCheckout ?? [],
    include: status?.observedInclude ?? [],
    included: (included ?? []).map((a) => a.digest),
    verify: status?.sourceVerificationMode ?? null,
  });
}

/** The stored artifact was built from this spec and these included artifacts. */
export function sameInputs(run: GitRepositoryRun): boolean {
  const { obj, status } = run;
  return (
    builtFrom(obj, need(run.includes, 'the includes')) === observedFrom(status, status.includedArtifacts)
  );
}
