import { mkdirSync } from 'node:fs';
import { GitError, GitRefNotFoundError } from './errors.ts';
import type {
  CheckoutOptions,
  CheckoutResult,
  CommitOptions,
  GitClient,
  GitOperationOptions,
  GitRefSpec,
  ResolvedRef,
} from './git-client.ts';
import { checkUrl, classifyFailure, type GitOp, gitOk, runGit, withGitOp } from './git-process.ts';
import { resolveInProcess } from './isomorphic-backend.ts';
import {
  checkRefspec,
  cleanSparseDir,
  describeTarget,
  fullRefName,
  parseLsRemote,
  type RefTarget,
  refTarget,
  resolveCommitTarget,
  revisionOf,
  selectRef,
} from './refs.ts';
import {
  commitInfo,
  commitSignature,
  signPayload,
  tagSignature,
  withCommitSignature,
} from './signed-object.ts';

/** GitClient on the `git` command line: every transport (http, https, ssh), streaming to disk. */
export class CliGitClient implements GitClient {
  readonly backend = 'cli' as const;

  /** Resolves a ref: in-process listing on http(s), `git ls-remote` on ssh, asking only for refs the target can match. */
  async resolve(url: string, ref: GitRefSpec, opts: GitOperationOptions): Promise<ResolvedRef> {
    const target = refTarget(ref);
    if (target.kind === 'commit') return resolveCommitTarget(target);
    // On http(s) the ref listing runs in-process: same two requests as `git ls-remote`, no process
    // spawn (measured in bench/git-backends.bench.ts). SSH has no in-process client.
    if (checkUrl(url).protocol !== 'ssh:') return resolveInProcess(url, ref, opts);
    return resolveWithLsRemote(url, ref, opts);
  }

  /** `git init` + `git fetch --depth=1 --no-tags <url> <ref>` + `git checkout --detach FETCH_HEAD`. */
  async checkout(url: string, ref: GitRefSpec, dir: string, opts: CheckoutOptions): Promise<CheckoutResult> {
    const target = refTarget(ref);
    checkUrl(url);
    const sparse = opts.sparse?.map(cleanSparseDir);
    mkdirSync(dir, { recursive: true });
    return withGitOp(url, opts, async (op) => {
      await gitOk(op, 'init', ['init', '-q', '--', dir]);
      if (sparse?.length) {
        // Non-cone patterns anchored at the root: only these directories, not the top-level files cone mode keeps.
        const patterns = sparse.map((d) => `/${d}/`);
        await gitOk(op, 'sparse-checkout', ['sparse-checkout', 'set', '--no-cone', '--', ...patterns], {
          cwd: dir,
        });
      }
      const refName = await fetchTarget(op, url, dir, target);
      const checkoutRef = target.kind === 'commit' ? target.commit : 'FETCH_HEAD';
      await gitOk(op, 'checkout', ['checkout', '-q', '--detach', checkoutRef, '--'], { cwd: dir });
      const commit = (await gitOk(op, 'rev-parse', ['rev-parse', 'HEAD'], { cwd: dir })).trim();
      if (target.kind === 'commit' && commit !== target.commit) {
        const what = describeTarget(target);
        throw new GitRefNotFoundError(`Git ${what} was not found on ${op.displayUrl}.`, what);
      }
      const rawCommit = await gitOk(op, 'cat-file', ['cat-file', 'commit', commit], { cwd: dir });
      const result: CheckoutResult = {
        commit,
        ...(refName ? { refName } : {}),
        revision: revisionOf(refName, commit, target),
        head: commitInfo(commit, rawCommit),
      };
      if (opts.withSignatures) {
        const cs = commitSignature(rawCommit);
        if (cs) result.commitSignature = cs;
        if (refName?.startsWith('refs/tags/')) {
          const fetched = (await gitOk(op, 'rev-parse', ['rev-parse', 'FETCH_HEAD'], { cwd: dir })).trim();
          const type = (await gitOk(op, 'cat-file', ['cat-file', '-t', fetched], { cwd: dir })).trim();
          if (type === 'tag') {
            const ts = tagSignature(await gitOk(op, 'cat-file', ['cat-file', 'tag', fetched], { cwd: dir }));
            if (ts) result.tagSignature = ts;
          }
        }
      }
      return result;
    });
  }

  /** A depth-1 clone of `branch` checked out on a local branch of the same name, ready to commit. */
  async cloneForWrite(
    url: string,
    branch: string,
    dir: string,
    opts: GitOperationOptions,
  ): Promise<CheckoutResult> {
    const target = refTarget({ branch });
    checkUrl(url);
    mkdirSync(dir, { recursive: true });
    return withGitOp(url, opts, async (op) => {
      const refName = fullRefName(target)!;
      await gitOk(op, 'init', ['init', '-q', '--', dir]);
      await gitOk(op, 'fetch', ['fetch', '-q', '--depth=1', '--no-tags', '--', url, refName], {
        cwd: dir,
        ref: describeTarget(target),
      });
      await gitOk(op, 'checkout', ['checkout', '-q', '-B', branch, 'FETCH_HEAD', '--'], { cwd: dir });
      const commit = (await gitOk(op, 'rev-parse', ['rev-parse', 'HEAD'], { cwd: dir })).trim();
      const raw = await gitOk(op, 'cat-file', ['cat-file', 'commit', commit], { cwd: dir });
      return {
        commit,
        refName,
        revision: revisionOf(refName, commit, target),
        head: commitInfo(commit, raw),
      };
    });
  }

  /** `git add -A` and a commit; signed commits are assembled here and signed with openpgp (no gpg needed). */
  async commit(
    dir: string,
    message: string,
    author: { name: string; email: string },
    opts: CommitOptions = {},
  ): Promise<string | undefined> {
    return withGitOp(undefined, { timeoutMs: 60_000 }, async (op) => {
      await gitOk(op, 'add', ['add', '-A', '--', '.'], { cwd: dir });
      const staged = await runGit(op, ['diff', '--cached', '--quiet'], { cwd: dir });
      if (staged.code === 0) return undefined;
      const name = identityPart(author.name);
      const email = identityPart(author.email);
      if (!opts.signingKey) {
        const env = {
          GIT_AUTHOR_NAME: name,
          GIT_AUTHOR_EMAIL: email,
          GIT_COMMITTER_NAME: name,
          GIT_COMMITTER_EMAIL: email,
        };
        await gitOk(op, 'commit', ['commit', '-q', '--no-verify', '-F', '-'], {
          cwd: dir,
          input: message,
          env,
        });
        return (await gitOk(op, 'rev-parse', ['rev-parse', 'HEAD'], { cwd: dir })).trim();
      }
      const tree = (await gitOk(op, 'write-tree', ['write-tree'], { cwd: dir })).trim();
      const parent = await runGit(op, ['rev-parse', '--verify', '-q', 'HEAD'], { cwd: dir });
      const raw = buildCommitObject(
        tree,
        parent.code === 0 ? [parent.stdout.trim()] : [],
        name,
        email,
        message,
      );
      const signature = await signPayload(raw, opts.signingKey, opts.passphrase).catch((e: unknown) => {
        throw new GitError(
          `Signing the commit failed: ${e instanceof Error ? e.message.replace(/\.$/, '') : 'unknown error'}.`,
        );
      });
      const signed = withCommitSignature(raw, signature);
      const oid = (
        await gitOk(op, 'hash-object', ['hash-object', '-t', 'commit', '-w', '--stdin'], {
          cwd: dir,
          input: signed,
        })
      ).trim();
      await gitOk(op, 'update-ref', ['update-ref', '-m', 'commit (signed)', 'HEAD', oid], { cwd: dir });
      return oid;
    });
  }

  /** `git push <url> <refspec>`; a non-fast-forward rejection becomes PushRejectedError. */
  async push(dir: string, url: string, refspec: string, opts: GitOperationOptions): Promise<void> {
    checkUrl(url);
    checkRefspec(refspec);
    await withGitOp(url, opts, (op) => gitOk(op, 'push', ['push', '-q', '--', url, refspec], { cwd: dir }));
  }
}

/** Fetches what the target names into `dir` (FETCH_HEAD, or the commit itself); resolves to the ref name used. */
async function fetchTarget(
  op: GitOp,
  url: string,
  dir: string,
  target: RefTarget,
): Promise<string | undefined> {
  const what = describeTarget(target);
  if (target.kind === 'commit' && target.branch) {
    // Flux semantics: the commit must be on the branch, so the branch's history is needed (no --depth).
    const refName = fullRefName(target)!;
    const tracking = 'refs/remotes/origin/branch';
    await gitOk(op, 'fetch', ['fetch', '-q', '--no-tags', '--', url, `+${refName}:${tracking}`], {
      cwd: dir,
      ref: `branch '${target.branch}'`,
    });
    const onBranch = await runGit(op, ['merge-base', '--is-ancestor', target.commit, tracking], { cwd: dir });
    if (onBranch.code !== 0)
      throw new GitRefNotFoundError(`Git ${what} was not found on ${op.displayUrl}.`, what);
    return refName;
  }
  if (target.kind === 'commit') {
    await fetchCommit(op, url, dir, target);
    return undefined;
  }
  // semver needs the tag list first; every other target names its ref directly.
  const refName =
    target.kind === 'semver' ? (await lsRemoteSelect(op, url, target)).refName! : fullRefName(target)!;
  await gitOk(op, 'fetch', ['fetch', '-q', '--depth=1', '--no-tags', '--', url, refName], {
    cwd: dir,
    ref: what,
  });
  return refName;
}

/**
 * Fetches one commit by SHA: shallow when the server allows wants by SHA (protocol v2 servers do),
 * else the default branch's history, like Flux does for a commit without a branch.
 */
async function fetchCommit(
  op: GitOp,
  url: string,
  dir: string,
  target: RefTarget & { kind: 'commit' },
): Promise<void> {
  const what = describeTarget(target);
  const shallow = await runGit(op, ['fetch', '-q', '--depth=1', '--no-tags', '--', url, target.commit], {
    cwd: dir,
  });
  if (shallow.code === 0) return;
  if (!/not our ref|unadvertised object|no such remote ref|couldn't find remote ref/i.test(shallow.stderr))
    throw classifyFailure(op, 'fetch', shallow.stderr, what);
  await gitOk(op, 'fetch', ['fetch', '-q', '--no-tags', '--', url, 'HEAD'], { cwd: dir, ref: what });
  const has = await runGit(op, ['cat-file', '-e', `${target.commit}^{commit}`], { cwd: dir });
  if (has.code !== 0) throw new GitRefNotFoundError(`Git ${what} was not found on ${op.displayUrl}.`, what);
}

/** Resolves a ref with `git ls-remote` on any transport (the ssh path of `resolve`; kept callable for the benchmark). */
export function resolveWithLsRemote(
  url: string,
  ref: GitRefSpec,
  opts: GitOperationOptions,
): Promise<ResolvedRef> {
  const target = refTarget(ref);
  if (target.kind === 'commit') return Promise.resolve(resolveCommitTarget(target));
  checkUrl(url);
  return withGitOp(url, opts, (op) => lsRemoteSelect(op, url, target));
}

async function lsRemoteSelect(op: GitOp, url: string, target: RefTarget): Promise<ResolvedRef> {
  const patterns =
    target.kind === 'semver'
      ? ['refs/tags/*']
      : target.kind === 'tag'
        ? [`refs/tags/${target.tag}`, `refs/tags/${target.tag}^{}`]
        : [fullRefName(target)!];
  const stdout = await gitOk(op, 'ls-remote', ['ls-remote', '--', url, ...patterns], {
    ref: describeTarget(target),
  });
  return selectRef(parseLsRemote(stdout), target, op.displayUrl);
}

/** Names and emails go into a raw object header, where `<`, `>` and newlines would corrupt it. */
function identityPart(s: string): string {
  return s.replace(/[<>\n\r]/g, '').trim();
}

/** The raw commit object `git commit` would write, before signing. */
export function buildCommitObject(
  tree: string,
  parents: string[],
  name: string,
  email: string,
  message: string,
  when = new Date(),
): string {
  const stamp = `${Math.floor(when.getTime() / 1000)} +0000`;
  const lines = [`tree ${tree}`, ...parents.map((p) => `parent ${p}`)];
  lines.push(`author ${name} <${email}> ${stamp}`, `committer ${name} <${email}> ${stamp}`);
  return `${lines.join('\n')}\n\n${message.endsWith('\n') ? message : `${message}\n`}`;
}
