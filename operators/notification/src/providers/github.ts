import { commitState, eventCommit, statusContext } from './commit-status.ts';
import { commitStatusRequest } from './git-host-api.ts';
import type { PayloadBuilder } from './types.ts';

export { githubApiBase } from './git-host-api.ts';

/** `github`: POST /repos/{owner}/{repo}/statuses/{sha} with the token as Bearer. */
export const github: PayloadBuilder = (n, p) => {
  const sha = eventCommit(n);
  if (!sha || !p.token) return undefined;
  return commitStatusRequest('github', { address: p.address, token: p.token, headers: p.headers }, sha, {
    state: commitState(n),
    context: statusContext(n),
    description: n.event.message,
  });
};
