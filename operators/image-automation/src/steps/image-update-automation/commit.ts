import { commitMessageData, renderCommitMessage } from '../../commit-message.ts';
import type { ImageUpdateAutomationRun } from '../../image-update-automation-run.ts';
import { need } from '../../run.ts';
import { gitFailure } from './git-failure.ts';

const DEFAULT_AUTHOR_NAME = 'Mooring';

/**
 * Commits the changed files (signed when asked) with the rendered message template; nothing to
 * do when no file changed.
 */
export async function commit(run: ImageUpdateAutomationRun): Promise<undefined> {
  const { obj } = run;
  const attempt = need(run.attempt, 'the attempt');
  const update = need(attempt.update, 'the update');
  if (update.files.length === 0) return undefined;
  const message = renderCommitMessage(
    obj.spec.git.commit.messageTemplate,
    commitMessageData(
      { name: obj.metadata.name ?? '', namespace: run.namespace },
      update.files,
      obj.spec.git.commit.messageTemplateValues ?? {},
    ),
  );
  const author = obj.spec.git.commit.author;
  try {
    const commit = await run.deps.git.commit(
      attempt.dir,
      message,
      { name: author.name || DEFAULT_AUTHOR_NAME, email: author.email },
      need(run.signing, 'the signing options'),
    );
    if (commit) {
      attempt.commit = commit;
      attempt.message = message;
    }
  } catch (err) {
    throw gitFailure(err);
  }
  return undefined;
}
