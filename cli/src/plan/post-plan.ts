// `mooring plan --post github|gitlab|gitea --pr N`: the Markdown plan as a comment on the pull
// request and the plan's outcome as a commit status on the head commit, through the notification
// operator's own request builders and sender. The token comes from MOORING_GIT_TOKEN and is never
// printed: the sender's errors name the HTTP status or network error code, never the request.
import {
  commitStatusRequest,
  type GitHost,
  pullRequestCommentRequest,
  sendRequest,
} from '@mooring/notification-operator/git-host';
import { CliError } from '../cli-error.ts';
import type { Plan } from './make-plan.ts';
import { planHeadline, planState } from './plan-summary.ts';

export const TOKEN_ENV = 'MOORING_GIT_TOKEN';
export const DEFAULT_STATUS_CONTEXT = 'mooring/plan';

export interface PostTarget {
  host: GitHost;
  pr: number;
  /** The repository's address on its host (https:// or ssh://; scp-like `git@host:org/app` is accepted). */
  repoUrl: string;
  token: string;
  context: string;
  /** The commit the status is set on: the head's, unless the head is a merge preview of the pull request. */
  statusSha: string;
}

/** `git@github.com:org/app.git` as the ssh:// URL the request builders read; other forms unchanged. */
export function asUrl(address: string): string {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(address)) return address;
  const scp = /^(?:([^@/]+)@)?([^:/]+):(.+)$/.exec(address);
  return scp ? `ssh://${scp[1] ? `${scp[1]}@` : ''}${scp[2]}/${scp[3]!.replace(/^\/+/, '')}` : address;
}

/** Posts the comment, then the commit status; the first failure ends it with a CliError. */
export async function postPlan(plan: Plan, markdown: string, t: PostTarget): Promise<void> {
  const target = { address: asUrl(t.repoUrl), token: t.token };
  const comment = pullRequestCommentRequest(t.host, target, t.pr, markdown);
  const status = commitStatusRequest(t.host, target, t.statusSha, {
    state: planState(plan),
    context: t.context,
    description: planHeadline(plan),
  });
  if (!comment || !status)
    throw new CliError(
      `the repository address names no owner/repository on ${t.host}: pass --repo-url https://<host>/<owner>/<repo>.`,
    );
  const send = { timeoutMs: 30_000 };
  const retry = { attempts: 3, baseDelayMs: 1_000 };
  const host = new URL(comment.url).host;
  await sendRequest(comment, send, retry).catch((err: Error) => {
    throw new CliError(
      `posting the plan to ${t.host} pull request #${t.pr} on ${host} failed: ${err.message}.`,
    );
  });
  await sendRequest(status, send, retry).catch((err: Error) => {
    throw new CliError(
      `setting the commit status of ${t.statusSha.slice(0, 12)} on ${host} failed: ${err.message}.`,
    );
  });
}
