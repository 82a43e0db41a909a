import {
  commitState,
  eventCommit,
  parseRepoAddress,
  shortDescription,
  statusContext,
} from './commit-status.ts';
import { jsonPost, type PayloadBuilder } from './types.ts';

const STATES = { success: 'success', failure: 'failed', pending: 'running' } as const;

/** `gitlab`: POST /api/v4/projects/{url-encoded path}/statuses/{sha} with `PRIVATE-TOKEN`. */
export const gitlab: PayloadBuilder = (n, p) => {
  const repo = parseRepoAddress(p.address);
  const sha = eventCommit(n);
  if (!repo || !sha || !p.token) return undefined;
  return jsonPost(
    `${repo.origin}/api/v4/projects/${encodeURIComponent(repo.path)}/statuses/${sha}`,
    {
      state: STATES[commitState(n)],
      name: statusContext(n),
      description: shortDescription(n.event.message, 255),
    },
    p,
    { 'private-token': p.token },
  );
};
