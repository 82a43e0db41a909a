import {
  commitState,
  eventCommit,
  parseRepoAddress,
  shortDescription,
  statusContext,
} from './commit-status.ts';
import { jsonPost, type PayloadBuilder } from './types.ts';

/** The REST API base for a GitHub host: api.github.com, else GitHub Enterprise's `/api/v3`. */
export function githubApiBase(origin: string, host: string): string {
  return host === 'github.com' ? 'https://api.github.com' : `${origin}/api/v3`;
}

/** `github`: POST /repos/{owner}/{repo}/statuses/{sha} with the token as Bearer. */
export const github: PayloadBuilder = (n, p) => {
  const repo = parseRepoAddress(p.address);
  const sha = eventCommit(n);
  if (!repo || !sha || !p.token) return undefined;
  return jsonPost(
    `${githubApiBase(repo.origin, repo.host)}/repos/${repo.path}/statuses/${sha}`,
    { state: commitState(n), context: statusContext(n), description: shortDescription(n.event.message) },
    p,
    {
      authorization: `Bearer ${p.token}`,
      accept: 'application/vnd.github+json',
      'x-github-api-version': '2022-11-28',
    },
  );
};
