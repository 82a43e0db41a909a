import { createHash } from 'node:crypto';
import {
  commitState,
  eventCommit,
  parseRepoAddress,
  shortDescription,
  statusContext,
} from './commit-status.ts';
import { jsonPost, type PayloadBuilder } from './types.ts';

const STATES = { success: 'SUCCESSFUL', failure: 'FAILED', pending: 'INPROGRESS' } as const;

/** Bitbucket Cloud's API for bitbucket.org; any other host is taken as serving the same 2.0 API at its root. */
export function bitbucketApiBase(origin: string, host: string): string {
  return host === 'bitbucket.org' ? 'https://api.bitbucket.org/2.0' : `${origin}/2.0`;
}

/**
 * `bitbucket` (Cloud): POST /repositories/{workspace}/{repo}/commit/{sha}/statuses/build with basic
 * auth from a `<username>:<app password>` token (Flux's format). The status `key` is limited to 40
 * characters, so it is the SHA-1 of the context, which stays stable across updates.
 */
export const bitbucket: PayloadBuilder = (n, p) => {
  const repo = parseRepoAddress(p.address);
  const sha = eventCommit(n);
  const sep = p.token?.indexOf(':') ?? -1;
  if (!repo || !sha || !p.token || sep < 1) return undefined;
  const context = statusContext(n);
  return jsonPost(
    `${bitbucketApiBase(repo.origin, repo.host)}/repositories/${repo.path}/commit/${sha}/statuses/build`,
    {
      state: STATES[commitState(n)],
      key: createHash('sha1').update(context).digest('hex'),
      name: context,
      description: shortDescription(n.event.message, 255),
      url: p.address,
    },
    p,
    { authorization: `Basic ${Buffer.from(p.token).toString('base64')}` },
  );
};
