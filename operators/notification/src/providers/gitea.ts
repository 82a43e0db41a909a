import { commitState, eventCommit, statusContext } from './commit-status.ts';
import { commitStatusRequest } from './git-host-api.ts';
import type { PayloadBuilder } from './types.ts';

/** `gitea` (and Forgejo): POST /api/v1/repos/{owner}/{repo}/statuses/{sha} with `Authorization: token`. */
export const gitea: PayloadBuilder = (n, p) => {
  const sha = eventCommit(n);
  if (!sha || !p.token) return undefined;
  return commitStatusRequest('gitea', { address: p.address, token: p.token, headers: p.headers }, sha, {
    state: commitState(n),
    context: statusContext(n),
    description: n.event.message,
  });
};
