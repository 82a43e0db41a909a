// The commit-status and pull-request-comment requests of GitHub, GitLab and Gitea, shared by the
// notification operator's Providers and `mooring plan --post`: one place knows each host's paths,
// auth header and field names.
import { parseRepoAddress, shortDescription } from './commit-status.ts';
import type { OutboundRequest } from './types.ts';

export type GitHost = 'github' | 'gitlab' | 'gitea';
export const GIT_HOSTS: readonly GitHost[] = ['github', 'gitlab', 'gitea'];

/** The repository on its host and the credentials to write to it. */
export interface GitHostTarget {
  /** The repository's address: `https://github.com/org/app(.git)`, `ssh://git@host/group/app`. */
  address: string;
  token: string;
  /** Extra headers sent with every request (a Provider secret's `headers`). */
  headers?: Record<string, string>;
}

/** A commit status in Mooring's words; each host's own state names are mapped below. */
export interface CommitStatus {
  state: 'success' | 'failure' | 'pending';
  context: string;
  description: string;
}

/** The REST API base for a GitHub host: api.github.com, else GitHub Enterprise's `/api/v3`. */
export function githubApiBase(origin: string, host: string): string {
  return host === 'github.com' ? 'https://api.github.com' : `${origin}/api/v3`;
}

const GITLAB_STATES = { success: 'success', failure: 'failed', pending: 'running' } as const;

const authHeaders = (host: GitHost, token: string): Record<string, string> => {
  if (host === 'github')
    return {
      authorization: `Bearer ${token}`,
      accept: 'application/vnd.github+json',
      'x-github-api-version': '2022-11-28',
    };
  if (host === 'gitlab') return { 'private-token': token };
  return { authorization: `token ${token}` };
};

function post(host: GitHost, target: GitHostTarget, url: string, payload: unknown): OutboundRequest {
  return {
    method: 'POST',
    url,
    headers: { ...target.headers, 'content-type': 'application/json', ...authHeaders(host, target.token) },
    body: JSON.stringify(payload),
  };
}

/** The repository's API root on its host; undefined when the address names no owner/repo. */
function apiRoot(host: GitHost, address: string): string | undefined {
  const repo = parseRepoAddress(address);
  if (!repo) return undefined;
  if (host === 'github') return `${githubApiBase(repo.origin, repo.host)}/repos/${repo.path}`;
  if (host === 'gitlab') return `${repo.origin}/api/v4/projects/${encodeURIComponent(repo.path)}`;
  return `${repo.origin}/api/v1/repos/${repo.path}`;
}

/**
 * The request that sets a commit status: GitHub `POST /repos/{o}/{r}/statuses/{sha}`, GitLab
 * `POST /api/v4/projects/{path}/statuses/{sha}`, Gitea `POST /api/v1/repos/{o}/{r}/statuses/{sha}`.
 */
export function commitStatusRequest(
  host: GitHost,
  target: GitHostTarget,
  sha: string,
  status: CommitStatus,
): OutboundRequest | undefined {
  const root = apiRoot(host, target.address);
  if (!root) return undefined;
  const url = `${root}/statuses/${sha}`;
  if (host === 'gitlab')
    return post(host, target, url, {
      state: GITLAB_STATES[status.state],
      name: status.context,
      description: shortDescription(status.description, 255),
    });
  return post(host, target, url, {
    state: status.state,
    context: status.context,
    description: shortDescription(status.description),
  });
}

/**
 * The request that comments on a pull request: GitHub and Gitea comment on the PR's issue
 * (`/issues/{n}/comments`), GitLab adds a note to the merge request (`/merge_requests/{n}/notes`).
 */
export function pullRequestCommentRequest(
  host: GitHost,
  target: GitHostTarget,
  pr: number,
  body: string,
): OutboundRequest | undefined {
  const root = apiRoot(host, target.address);
  if (!root) return undefined;
  const url = host === 'gitlab' ? `${root}/merge_requests/${pr}/notes` : `${root}/issues/${pr}/comments`;
  return post(host, target, url, { body });
}
