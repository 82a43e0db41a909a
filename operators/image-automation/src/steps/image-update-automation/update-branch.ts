import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Reason } from '@mooring/api';
import { PushRejectedError } from '@mooring/git';
import { parseDuration, RetryableError, runSteps, type Step, step } from '@mooring/runtime';
import type { ImageUpdateAutomationRun } from '../../image-update-automation-run.ts';
import { need } from '../../run.ts';
import { clone } from './clone.ts';
import { commit } from './commit.ts';
import { push } from './push.ts';
import { updateFiles } from './update-files.ts';

const DEFAULT_GIT_TIMEOUT_MS = 60_000;

/** One attempt, in a fresh clone; docs/architecture.md lists the same steps. */
export const PUSH_ATTEMPT_STEPS: readonly Step<ImageUpdateAutomationRun>[] = [
  step('clone', clone),
  step('update files', updateFiles),
  step('commit', commit),
  step('push', push),
];

/** Runs the attempt steps in a scratch folder, removed when they end, whatever happened. */
async function attempt(run: ImageUpdateAutomationRun, timeoutMs: number): Promise<void> {
  const opts = { auth: run.auth, timeoutMs, signal: run.ctx.deadline(timeoutMs) };
  const dir = await mkdtemp(join(tmpdir(), 'mooring-image-automation-'));
  run.attempt = { dir, opts };
  try {
    await runSteps(PUSH_ATTEMPT_STEPS, run, (name) => run.ctx.log.debug({ step: name }, 'attempt step'));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * The attempt steps, with the GitRepository's `spec.timeout` for each Git operation. A push the
 * remote rejects because the branch moved starts again from a fresh clone, up to
 * `maxPushAttempts` (3) tries.
 */
export async function updateBranch(run: ImageUpdateAutomationRun): Promise<undefined> {
  const repo = need(run.repo, 'the GitRepository');
  const branches = need(run.branches, 'the branches');
  const maxAttempts = run.deps.maxPushAttempts ?? 3;
  let timeoutMs = DEFAULT_GIT_TIMEOUT_MS;
  if (repo.spec.timeout) timeoutMs = parseDuration(repo.spec.timeout);
  for (let tries = 1; ; tries++) {
    try {
      await attempt(run, timeoutMs);
      return undefined;
    } catch (err) {
      if (!(err instanceof PushRejectedError)) throw err;
      if (tries >= maxAttempts) {
        throw new RetryableError(
          Reason.GitOperationFailed,
          `push to branch '${branches.push}' was rejected ${tries} times because the branch kept moving`,
        );
      }
      run.ctx.log.info(
        { attempt: tries, branch: branches.push },
        'push rejected: the branch moved; trying again from a fresh clone',
      );
    }
  }
}
