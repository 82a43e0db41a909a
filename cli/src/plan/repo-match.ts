// Which GitRepository objects fetch the repository being planned: one whose URL names the same
// host and path as one of the repository's remotes, or one named by --source.

/** `host/path` of a Git URL, lower-case host, no user, port, `.git` or slashes at the ends. */
export function normalizeRepoUrl(url: string): string | undefined {
  const trimmed = url.trim();
  // scp-like `git@github.com:org/app.git`
  const scp = /^(?:[^@/]+@)?([^:/]+):(?!\/\/)(.+)$/.exec(trimmed);
  let host: string;
  let path: string;
  if (scp && !/^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed)) {
    host = scp[1]!;
    path = scp[2]!;
  } else {
    let parsed: URL;
    try {
      parsed = new URL(trimmed);
    } catch {
      return undefined;
    }
    if (parsed.protocol === 'file:')
      return `file:${parsed.pathname.replace(/\/+$/, '').replace(/\.git$/, '')}`;
    host = parsed.hostname;
    path = parsed.pathname;
  }
  path = path.replace(/^\/+|\/+$/g, '').replace(/\.git$/, '');
  return path ? `${host.toLowerCase()}/${path}` : undefined;
}

/** A GitRepository as declared: where its namespace/name points. */
export interface DeclaredGitRepository {
  namespace: string;
  name: string;
  url?: string;
}

/** Decides whether a sourceRef names this repository. */
export interface RepoMatcher {
  matches(source: { namespace: string; name: string }): boolean;
  /** How the decision is made, for the report. */
  describe: string;
}

/**
 * `--source ns/name` (repeatable) decides alone when given; otherwise a GitRepository declared in
 * the repository whose URL equals one of the remotes' (ignoring scheme, user, port and `.git`).
 */
export function repoMatcher(
  sources: string[],
  remotes: string[],
  declared: DeclaredGitRepository[],
): RepoMatcher {
  if (sources.length) {
    const wanted = new Set(sources);
    return {
      matches: (s) => wanted.has(`${s.namespace}/${s.name}`),
      describe: `GitRepository ${sources.join(', ')} (--source)`,
    };
  }
  const remoteKeys = new Set(remotes.map(normalizeRepoUrl).filter((u): u is string => !!u));
  const ours = new Set(
    declared
      .filter((g) => g.url && remoteKeys.has(normalizeRepoUrl(g.url) ?? ''))
      .map((g) => `${g.namespace}/${g.name}`),
  );
  return {
    matches: (s) => ours.has(`${s.namespace}/${s.name}`),
    describe: ours.size
      ? `GitRepository ${[...ours].sort().join(', ')} (URL of a remote)`
      : 'no GitRepository declared here has the URL of a remote',
  };
}
