import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type GitRepositoryRun, refOf } from '../../git-repository-run.ts';
import { gitFailure } from './git-failure.ts';

/** Fetches exactly the resolved commit (sparse when asked, with signatures when verified) into scratch. */
export async function checkOut(run: GitRepositoryRun): Promise<undefined> {
  const { obj, timeoutMs } = run;
  run.scratch = await mkdtemp(join(tmpdir(), 'mooring-git-'));
  try {
    run.checkout = await run.deps.git.checkout(obj.spec.url, refOf(obj), run.scratch, {
      auth: run.auth,
      timeoutMs,
      signal: run.ctx.deadline(timeoutMs),
      sparse: obj.spec.sparseCheckout?.length ? obj.spec.sparseCheckout : undefined,
      withSignatures: !!obj.spec.verify,
    });
  } catch (err) {
    gitFailure(run, err);
  }
  return undefined;
}
