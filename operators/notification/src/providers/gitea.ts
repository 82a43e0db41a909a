import {
  commitState,
  eventCommit,
  parseRepoAddress,
  shortDescription,
  statusContext,
} from './commit-status.ts';
import { jsonPost, type PayloadBuilder } from './types.ts';

/** `gitea` (and Forgejo): POST /api/v1/repos/{owner}/{repo}/statuses/{sha} with `Authorization: token`. */
export const gitea: PayloadBuilder = (n, p) => {
  const repo = parseRepoAddress(p.address);
  const sha = eventCommit(n);
  if (!repo || !sha || !p.token) return undefined;
  return jsonPost(
    `${repo.origin}/api/v1/repos/${repo.path}/statuses/${sha}`,
    { state: commitState(n), context: statusContext(n), description: shortDescription(n.event.message) },
    p,
    { authorization: `token ${p.token}` },
  );
};
