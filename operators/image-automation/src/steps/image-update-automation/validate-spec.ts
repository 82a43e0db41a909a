import { Reason } from '@mooring/api';
import { StalledError } from '@mooring/runtime';
import { commitMessageData, InvalidTemplateError, renderCommitMessage } from '../../commit-message.ts';
import type { ImageUpdateAutomationRun } from '../../image-update-automation-run.ts';

/** Refuses an update strategy other than Setters, and a commit message template that cannot render. */
export function validateSpec(run: ImageUpdateAutomationRun): undefined {
  const { spec } = run.obj;
  const strategy = spec.update?.strategy ?? 'Setters';
  if (strategy !== 'Setters') {
    throw new StalledError(
      Reason.InvalidUpdateStrategy,
      `update strategy ${strategy} is not supported; use Setters`,
    );
  }
  // A template that cannot render fails now, not only once an image changes.
  try {
    renderCommitMessage(
      spec.git.commit.messageTemplate,
      commitMessageData({ name: '', namespace: '' }, [], spec.git.commit.messageTemplateValues ?? {}),
    );
  } catch (err) {
    if (err instanceof InvalidTemplateError) throw new StalledError('InvalidMessageTemplate', err.message);
    throw err;
  }
  return undefined;
}
