/**
 * The web page of a commit when the repository URL is on a Git host whose URL pattern is known
 * (GitHub, GitLab, Bitbucket, by host name), else undefined. `revision` is Flux's
 * `<ref>@sha1:<hex>` or a bare hex commit.
 */
export function commitLink(
  repositoryUrl: string | undefined,
  revision: string | undefined,
): string | undefined {
  if (!repositoryUrl || !revision) return undefined;
  const sha = /(?:^|@sha1:|@sha256:)([0-9a-f]{7,64})$/.exec(revision)?.[1];
  if (!sha) return undefined;
  const parsed = parseRepository(repositoryUrl);
  if (!parsed) return undefined;
  const { host, path } = parsed;
  if (host === 'github.com') return `https://github.com/${path}/commit/${sha}`;
  if (host === 'gitlab.com' || host.startsWith('gitlab.')) return `https://${host}/${path}/-/commit/${sha}`;
  if (host === 'bitbucket.org') return `https://bitbucket.org/${path}/commits/${sha}`;
  return undefined;
}

// https://host/owner/repo(.git), ssh://git@host/owner/repo.git and scp-like git@host:owner/repo.git.
function parseRepository(url: string): { host: string; path: string } | undefined {
  const scp = /^[\w.-]+@([\w.-]+):(?!\/)(.+)$/.exec(url);
  let host: string;
  let path: string;
  if (scp) {
    host = scp[1]!;
    path = scp[2]!;
  } else {
    const u = URL.parse(url);
    if (!u || !/^(https?|ssh|git):$/.test(u.protocol)) return undefined;
    host = u.hostname;
    path = u.pathname;
  }
  path = path
    .replace(/^\/+/, '')
    .replace(/\/+$/, '')
    .replace(/\.git$/, '');
  if (!/^[\w.-]+(\/[\w.-]+)+$/.test(path)) return undefined;
  return { host: host.toLowerCase(), path };
}
