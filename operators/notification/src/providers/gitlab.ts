import { commitState, eventCommit, statusContext } from './commit-status.ts';
import { commitStatusRequest } from './git-host-api.ts';
import type { PayloadBuilder } from './types.ts';

/** `gitlab`: POST /api/v4/projects/{url-encoded path}/statuses/{sha} with `PRIVATE-TOKEN`. */
export const gitlab: PayloadBuilder = (n, p) => {
  const sha = eventCommit(n);
  if (!sha || !p.token) return undefined;
  return commitStatusRequest('gitlab', { address: p.address, token: p.token, headers: p.headers }, sha, {
    state: commitState(n),
    context: statusContext(n),
    description: n.event.message,
  });
};
