import type { GitRepositoryRun } from '../../git-repository-run.ts';
import { refOf } from '../../git-repository-run.ts';
import { gitFailure } from './git-failure.ts';

/** The cheap remote call: which commit the ref points at now, without fetching any objects. */
export async function resolveRevision(run: GitRepositoryRun): Promise<undefined> {
  const { obj, timeoutMs } = run;
  try {
    const resolved = await run.deps.git.resolve(obj.spec.url, refOf(obj), {
      auth: run.auth,
      timeoutMs,
      signal: run.ctx.deadline(timeoutMs),
    });
    run.revision = resolved.revision;
  } catch (err) {
    gitFailure(run, err);
  }
  return undefined;
}
