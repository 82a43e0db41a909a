import type { ImageUpdateAutomationRun } from '../../image-update-automation-run.ts';
import { need } from '../../run.ts';

/**
 * The run on the status: its time and the policies' images; the revision the branch is at (the
 * pushed commit, with a Succeeded event naming the changed files, or the cloned revision when
 * nothing changed).
 */
export function recordRun(run: ImageUpdateAutomationRun): undefined {
  const { ctx, status } = run;
  const attempt = need(run.attempt, 'the attempt');
  const checkout = need(attempt.checkout, 'the checkout');
  const branches = need(run.branches, 'the branches');
  const now = ctx.now().toISOString();
  status.lastAutomationRunTime = now;
  status.observedPolicies = Object.fromEntries(need(run.policies, 'the policies'));
  if (!attempt.commit) {
    status.observedSourceRevision = checkout.revision;
    run.result = { message: `repository up to date at '${checkout.revision}'`, revision: checkout.revision };
    return undefined;
  }
  const revision = `${branches.push}@sha1:${attempt.commit}`;
  status.observedSourceRevision = revision;
  status.lastPushCommit = attempt.commit;
  status.lastPushTime = now;
  const changed = need(attempt.update, 'the update')
    .files.map((f) => f.path)
    .join(', ');
  const short = attempt.commit.slice(0, 12);
  ctx.event(
    'info',
    'Succeeded',
    `pushed commit '${short}' to branch '${branches.push}' changing ${changed}\n${attempt.message}`,
    { revision },
  );
  run.result = { message: `pushed commit '${short}' to branch '${branches.push}'`, revision };
  return undefined;
}
