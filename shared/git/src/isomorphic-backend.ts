import fs, { mkdirSync } from 'node:fs';
import https from 'node:https';
import type { HttpClient } from 'isomorphic-git';
import { errnoConnectFailure } from './connect-failure.ts';
import { GitAuthError, GitError, GitRefNotFoundError, GitTimeoutError, PushRejectedError } from './errors.ts';
import type {
  CheckoutOptions,
  CheckoutResult,
  CommitOptions,
  GitAuth,
  GitClient,
  GitOperationOptions,
  GitRefSpec,
  ResolvedRef,
} from './git-client.ts';
import { redactText, redactUrl, secretsOf } from './redact.ts';
import {
  checkRefspec,
  cleanSparseDir,
  describeTarget,
  fullRefName,
  type RefTarget,
  type RemoteRef,
  refTarget,
  resolveCommitTarget,
  revisionOf,
  selectRef,
} from './refs.ts';
import { commitInfo, commitSignature, signPayload, tagSignature } from './signed-object.ts';

// isomorphic-git and its http client are loaded on first use: with pako they were 0.5 MB that the
// source and image-automation operators parsed and ran at every start, before /readyz answered.
type IsomorphicGit = typeof import('isomorphic-git').default;
let loading: Promise<{ git: IsomorphicGit; httpNode: HttpClient }> | undefined;
function isomorphicGit(): Promise<{ git: IsomorphicGit; httpNode: HttpClient }> {
  loading ??= Promise.all([import('isomorphic-git'), import('isomorphic-git/http/node')]).then(
    ([git, http]) => ({ git: git.default, httpNode: http.default }),
  );
  return loading;
}

/** What every isomorphic-git network call gets: an HTTP client bound to a signal (and CA), and auth headers. */
interface Remote {
  http: HttpClient;
  headers: Record<string, string>;
  url: string;
  displayUrl: string;
  secrets: string[];
}

/** GitClient on isomorphic-git: in-process, http/https only, the fallback where no `git` binary exists. */
export class IsomorphicGitClient implements GitClient {
  readonly backend = 'isomorphic' as const;

  /** Resolves a ref with `listServerRefs` (protocol v2, filtered by prefix, tags peeled). */
  resolve(url: string, ref: GitRefSpec, opts: GitOperationOptions): Promise<ResolvedRef> {
    return resolveInProcess(url, ref, opts);
  }

  /** Depth-1 fetch of one ref (full history for commit targets, which protocol v1 cannot fetch shallowly) and checkout. */
  async checkout(url: string, ref: GitRefSpec, dir: string, opts: CheckoutOptions): Promise<CheckoutResult> {
    const { git } = await isomorphicGit();
    const target = refTarget(ref);
    const sparse = opts.sparse?.map(cleanSparseDir);
    mkdirSync(dir, { recursive: true });
    return withRemote(url, opts, 'fetch', describeTarget(target), async (remote) => {
      // isomorphic-git adds protocol headers to the object it is given, so each call gets a copy.
      const base = { fs, dir, http: remote.http, url };
      let refName: string | undefined;
      let fetchHead: string;
      await git.init({ fs, dir, defaultBranch: 'main' });
      // fetch insists on a configured remote; the URL is stored, credentials never are.
      await git.addRemote({ fs, dir, remote: 'origin', url: redactUrl(url) });
      if (target.kind === 'commit') {
        refName = fullRefName(target);
        // Without a branch, Flux clones the default branch and looks for the commit in its history.
        const res = await git.fetch({
          ...base,
          headers: { ...remote.headers },
          singleBranch: true,
          tags: false,
          ...(refName ? { ref: refName } : {}),
        });
        if (!res.fetchHead) throw notFound(remote, target);
        const onBranch =
          res.fetchHead === target.commit ||
          (await git
            .isDescendent({ fs, dir, oid: res.fetchHead, ancestor: target.commit, depth: -1 })
            .catch(() => false));
        if (!onBranch) throw notFound(remote, target);
        fetchHead = target.commit;
      } else {
        refName =
          target.kind === 'semver' ? (await listAndSelect(remote, target)).refName! : fullRefName(target)!;
        const res = await git.fetch({
          ...base,
          headers: { ...remote.headers },
          ref: refName,
          singleBranch: true,
          depth: 1,
          tags: false,
        });
        if (!res.fetchHead) throw notFound(remote, target);
        fetchHead = res.fetchHead;
      }
      const commit = (await peel(dir, fetchHead)).commit;
      await git.checkout({
        fs,
        dir,
        ref: commit,
        force: true,
        ...(sparse?.length ? { filepaths: sparse } : {}),
      });
      const rawCommit = await readRaw(dir, commit);
      const result: CheckoutResult = {
        commit,
        ...(refName ? { refName } : {}),
        revision: revisionOf(refName, commit, target),
        head: commitInfo(commit, rawCommit),
      };
      if (opts.withSignatures) {
        const cs = commitSignature(rawCommit);
        if (cs) result.commitSignature = cs;
        if (refName?.startsWith('refs/tags/') && fetchHead !== commit) {
          const ts = tagSignature(await readRaw(dir, fetchHead));
          if (ts) result.tagSignature = ts;
        }
      }
      return result;
    });
  }

  /** A depth-1 clone of `branch`, checked out on that branch, ready to commit and push. */
  async cloneForWrite(
    url: string,
    branch: string,
    dir: string,
    opts: GitOperationOptions,
  ): Promise<CheckoutResult> {
    const { git } = await isomorphicGit();
    const target = refTarget({ branch });
    mkdirSync(dir, { recursive: true });
    return withRemote(url, opts, 'clone', describeTarget(target), async (remote) => {
      const refName = fullRefName(target)!;
      await git.init({ fs, dir, defaultBranch: branch });
      await git.addRemote({ fs, dir, remote: 'origin', url: redactUrl(url) });
      const res = await git.fetch({
        fs,
        dir,
        http: remote.http,
        url,
        headers: { ...remote.headers },
        ref: refName,
        singleBranch: true,
        depth: 1,
        tags: false,
      });
      if (!res.fetchHead) throw notFound(remote, target);
      await git.writeRef({ fs, dir, ref: refName, value: res.fetchHead, force: true });
      await git.checkout({ fs, dir, ref: branch, force: true });
      const raw = await readRaw(dir, res.fetchHead);
      return {
        commit: res.fetchHead,
        refName,
        revision: revisionOf(refName, res.fetchHead, target),
        head: commitInfo(res.fetchHead, raw),
      };
    });
  }

  /** Stages every change (deletions too) and commits; signing goes through openpgp in `onSign`. */
  async commit(
    dir: string,
    message: string,
    author: { name: string; email: string },
    opts: CommitOptions = {},
  ): Promise<string | undefined> {
    const { git } = await isomorphicGit();
    try {
      const matrix = await git.statusMatrix({ fs, dir });
      let changed = false;
      for (const [filepath, head, workdir, stage] of matrix) {
        if (head === 1 && workdir === 1 && stage === 1) continue;
        changed = true;
        if (workdir === 0) await git.remove({ fs, dir, filepath });
        else await git.add({ fs, dir, filepath });
      }
      if (!changed) return undefined;
      const who = { name: author.name, email: author.email, timezoneOffset: 0 };
      return await git.commit({
        fs,
        dir,
        message,
        author: who,
        committer: who,
        ...(opts.signingKey
          ? {
              signingKey: opts.signingKey,
              onSign: async ({ payload, secretKey }: { payload: string; secretKey: string }) => ({
                signature: await signPayload(payload, secretKey, opts.passphrase),
              }),
            }
          : {}),
      });
    } catch (err) {
      const detail = err instanceof Error ? err.message.replace(/[.\s]+$/, '') : 'unknown error';
      throw new GitError(`Git commit in the local clone failed: ${detail}.`);
    }
  }

  /** Pushes `src:dst`; a non-fast-forward rejection becomes PushRejectedError. */
  async push(dir: string, url: string, refspec: string, opts: GitOperationOptions): Promise<void> {
    const { git } = await isomorphicGit();
    checkRefspec(refspec);
    const [src = '', dst = src] = refspec.replace(/^\+/, '').split(':');
    const force = refspec.startsWith('+');
    await withRemote(url, opts, 'push', undefined, async (remote) => {
      const res = await git.push({
        fs,
        dir,
        http: remote.http,
        url,
        headers: { ...remote.headers },
        ref: src,
        remoteRef: dst,
        force,
      });
      if (!res.ok) {
        const detail = redactText(
          res.error ?? Object.values(res.refs)[0]?.error ?? 'unknown error',
          remote.secrets,
        );
        if (/fast-forward|fetch first|rejected|stale/i.test(detail))
          throw new PushRejectedError(`Git push on ${remote.displayUrl} was rejected: ${detail}.`);
        throw new GitError(`Git push on ${remote.displayUrl} failed: ${detail}.`);
      }
    });
  }
}

/** Resolves a ref with isomorphic-git's `listServerRefs` (protocol v2, filtered by prefix, tags peeled); http/https only. */
export async function resolveInProcess(
  url: string,
  ref: GitRefSpec,
  opts: GitOperationOptions,
): Promise<ResolvedRef> {
  const target = refTarget(ref);
  if (target.kind === 'commit') return resolveCommitTarget(target);
  return withRemote(url, opts, 'ls-remote', describeTarget(target), (remote) =>
    listAndSelect(remote, target),
  );
}

function authHeaders(auth: GitAuth | undefined): Record<string, string> {
  if (auth?.bearerToken) return { Authorization: `Bearer ${auth.bearerToken}` };
  if (auth?.username !== undefined || auth?.password !== undefined) {
    const basic = Buffer.from(`${auth.username ?? ''}:${auth.password ?? ''}`).toString('base64');
    return { Authorization: `Basic ${basic}` };
  }
  return {};
}

/** Runs `fn` with a bound HTTP client, a deadline that aborts in-flight requests, and error mapping. */
async function withRemote<T>(
  url: string,
  opts: GitOperationOptions,
  what: string,
  ref: string | undefined,
  fn: (remote: Remote) => Promise<T>,
): Promise<T> {
  const displayUrl = redactUrl(url);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new GitError(`The Git URL ${JSON.stringify(displayUrl)} is not a valid URL.`);
  }
  if (parsed.protocol === 'ssh:')
    throw new GitError(`Git over SSH (${displayUrl}) needs the git CLI backend; isomorphic-git has no SSH.`);
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw new GitError(`The Git URL scheme ${parsed.protocol} is not supported; use http or https.`);
  const secrets = secretsOf(opts.auth, url);
  const controller = new AbortController();
  // What stopped it first: the deadline or the caller's signal; the message says which.
  let stoppedBy: 'timeout' | 'abort' | undefined;
  const onAbort = () => {
    stoppedBy ??= 'abort';
    controller.abort();
  };
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  if (opts.signal?.aborted) onAbort();
  const timer = setTimeout(() => {
    stoppedBy ??= 'timeout';
    controller.abort();
  }, opts.timeoutMs);
  // A private CA goes through a dedicated agent, as git's http.sslCAInfo does for the CLI.
  const agent =
    opts.auth?.caCert && parsed.protocol === 'https:' ? new https.Agent({ ca: opts.auth.caCert }) : undefined;
  const http: HttpClient = {
    request: async (req) =>
      (await isomorphicGit()).httpNode.request({
        ...req,
        ...(agent ? { agent } : {}),
        signal: controller.signal,
      }),
  };
  const remote: Remote = { http, headers: authHeaders(opts.auth), url, displayUrl, secrets };
  // isomorphic-git does not check the signal between its own steps, so the deadline also races the call.
  const aborted = new Promise<never>((_, reject) => {
    controller.signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
  });
  aborted.catch(() => {});
  try {
    return await Promise.race([fn(remote), aborted]);
  } catch (err) {
    if (controller.signal.aborted) {
      const why = stoppedBy === 'abort' ? 'was aborted' : `timed out after ${opts.timeoutMs} ms`;
      throw new GitTimeoutError(`Git ${what} on ${displayUrl} ${why}.`);
    }
    throw mapError(err, remote, what, ref);
  } finally {
    clearTimeout(timer);
    opts.signal?.removeEventListener('abort', onAbort);
    agent?.destroy();
  }
}

function mapError(err: unknown, remote: Remote, what: string, ref: string | undefined): GitError {
  if (err instanceof GitError) return err;
  const e = err as { code?: string; message?: string; data?: { statusCode?: number; reason?: string } };
  const detail = redactText(String(e.message ?? err), remote.secrets).replace(/[.\s]+$/, '');
  const where = remote.displayUrl;
  const status = e.data?.statusCode;
  if (e.code === 'HttpError' && (status === 401 || status === 403))
    return new GitAuthError(`Git authentication failed on ${where} during ${what}: ${detail}.`);
  if (e.code === 'PushRejectedError')
    return new PushRejectedError(`Git push on ${where} was rejected: ${detail}.`);
  if ((e.code === 'NotFoundError' || e.code === 'CommitNotFetchedError') && ref)
    return new GitRefNotFoundError(`Git ${ref} was not found on ${where}.`, ref);
  const unreachable = errnoConnectFailure(err);
  return new GitError(`Git ${what} on ${where} failed: ${unreachable ?? detail}.`);
}

function notFound(remote: Remote, target: RefTarget): GitRefNotFoundError {
  const what = describeTarget(target);
  return new GitRefNotFoundError(`Git ${what} was not found on ${remote.displayUrl}.`, what);
}

async function listAndSelect(remote: Remote, target: RefTarget): Promise<ResolvedRef> {
  const { git } = await isomorphicGit();
  const prefix = target.kind === 'semver' || target.kind === 'tag' ? 'refs/tags/' : fullRefName(target)!;
  const refs = await git.listServerRefs({
    http: remote.http,
    url: remote.url,
    headers: { ...remote.headers },
    prefix,
    peelTags: true,
    protocolVersion: 2,
  });
  const remoteRefs: RemoteRef[] = refs.map((r) => ({
    name: r.ref,
    oid: r.oid,
    ...(r.peeled ? { peeled: r.peeled } : {}),
  }));
  return selectRef(remoteRefs, target, remote.displayUrl);
}

/** Follows annotated tags down to the commit they point at. */
async function peel(dir: string, oid: string): Promise<{ commit: string }> {
  const { git } = await isomorphicGit();
  let current = oid;
  for (let i = 0; i < 10; i++) {
    const obj = await git.readObject({ fs, dir, oid: current, format: 'parsed' });
    if (obj.type === 'commit') return { commit: current };
    if (obj.type !== 'tag') break;
    current = (obj.object as { object: string }).object;
  }
  throw new GitError(`Git object ${oid} does not point at a commit.`);
}

async function readRaw(dir: string, oid: string): Promise<string> {
  const { git } = await isomorphicGit();
  const obj = await git.readObject({ fs, dir, oid, format: 'content' });
  return Buffer.from(obj.object as Uint8Array).toString('utf8');
}
