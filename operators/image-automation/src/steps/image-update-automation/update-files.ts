import { Reason } from '@mooring/api';
import { RetryableError, StalledError } from '@mooring/runtime';
import type { ImageUpdateAutomationRun } from '../../image-update-automation-run.ts';
import { need } from '../../run.ts';
import { InvalidUpdatePathError, updateFiles as rewrite } from '../../update-files.ts';

/**
 * Rewrites the values marked with `$imagepolicy` setters under `update.path` to the selected
 * policies' images; a file with a marker that is not valid YAML is skipped, with a warning.
 */
export async function updateFiles(run: ImageUpdateAutomationRun): Promise<undefined> {
  const attempt = need(run.attempt, 'the attempt');
  const images = need(run.images, 'the images');
  try {
    attempt.update = await rewrite(attempt.dir, run.obj.spec.update?.path, images);
  } catch (err) {
    if (err instanceof InvalidUpdatePathError) throw new StalledError(Reason.InvalidPath, err.message);
    throw new RetryableError(Reason.UpdateFailed, `updating files failed: ${(err as Error).message}`);
  }
  for (const s of attempt.update.skipped)
    run.ctx.log.warn({ path: s.path, err: s.error }, 'file with a setter marker is not valid YAML; skipped');
  return undefined;
}
