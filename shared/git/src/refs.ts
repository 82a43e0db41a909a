import semver from 'semver';
import { GitError, GitRefNotFoundError } from './errors.ts';
import type { GitRefSpec, ResolvedRef } from './git-client.ts';

/** One ref as the remote advertises it; `peeled` is the commit an annotated tag points at. */
export interface RemoteRef {
  name: string;
  oid: string;
  peeled?: string;
}

/** The one thing a GitRefSpec asks for after applying Flux's precedence. */
export type RefTarget =
  | { kind: 'commit'; commit: string; branch?: string }
  | { kind: 'name'; name: string }
  | { kind: 'semver'; range: string }
  | { kind: 'tag'; tag: string }
  | { kind: 'branch'; branch: string };

const HEX40 = /^[0-9a-f]{40}$/;

/** True when `s` holds an ASCII control character (a regex class for them trips the linter). */
export function hasControlChar(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return true;
  }
  return false;
}

/** Rejects ref values git could read as an option or that are not valid ref names. */
function checkRefValue(field: string, value: string): void {
  // git check-ref-format's rules, the ones that matter for safety and clear errors.
  const bad =
    value === '' ||
    value.startsWith('-') ||
    value.includes('..') ||
    value.includes('@{') ||
    value.endsWith('.lock') ||
    value.endsWith('/') ||
    value.endsWith('.') ||
    /[\s~^:?*[\\]/.test(value) ||
    hasControlChar(value);
  if (bad) throw new GitError(`The Git ref ${field} ${JSON.stringify(value)} is not a valid ref name.`);
}

/** Applies Flux's precedence (commit > name > semver > tag > branch, default branch `master`) and validates the values. */
export function refTarget(ref: GitRefSpec): RefTarget {
  if (ref.commit) {
    const commit = ref.commit.toLowerCase();
    if (!HEX40.test(commit))
      throw new GitError(`The Git commit ${JSON.stringify(ref.commit)} is not a full 40-character SHA-1.`);
    if (ref.branch) checkRefValue('branch', ref.branch);
    return ref.branch ? { kind: 'commit', commit, branch: ref.branch } : { kind: 'commit', commit };
  }
  if (ref.name) {
    checkRefValue('name', ref.name);
    return { kind: 'name', name: ref.name };
  }
  if (ref.semver) {
    if (semver.validRange(ref.semver) === null)
      throw new GitError(`The semver range ${JSON.stringify(ref.semver)} is not valid.`);
    return { kind: 'semver', range: ref.semver };
  }
  if (ref.tag) {
    checkRefValue('tag', ref.tag);
    return { kind: 'tag', tag: ref.tag };
  }
  const branch = ref.branch || 'master';
  checkRefValue('branch', branch);
  return { kind: 'branch', branch };
}

/** The full ref name to ask the remote for, when the target names one directly. */
export function fullRefName(target: RefTarget): string | undefined {
  switch (target.kind) {
    case 'branch':
      return `refs/heads/${target.branch}`;
    case 'tag':
      return `refs/tags/${target.tag}`;
    case 'name':
      return target.name;
    case 'commit':
      return target.branch ? `refs/heads/${target.branch}` : undefined;
    case 'semver':
      return undefined;
  }
}

/** Human description of the target for error messages. */
export function describeTarget(target: RefTarget): string {
  switch (target.kind) {
    case 'branch':
      return `branch '${target.branch}'`;
    case 'tag':
      return `tag '${target.tag}'`;
    case 'name':
      return `ref '${target.name}'`;
    case 'semver':
      return `a tag matching semver '${target.range}'`;
    case 'commit':
      return target.branch
        ? `commit ${target.commit} on branch '${target.branch}'`
        : `commit ${target.commit}`;
  }
}

/** Flux's artifact revision: `<branch|tag>@sha1:<hex>`, `<full ref name>@sha1:<hex>` or `sha1:<hex>`. */
export function revisionOf(refName: string | undefined, commit: string, target: RefTarget): string {
  if (!refName) return `sha1:${commit}`;
  if (target.kind === 'name') return `${refName}@sha1:${commit}`;
  const short = refName.replace(/^refs\/(heads|tags)\//, '');
  return `${short}@sha1:${commit}`;
}

/** The ResolvedRef of a commit-only target, which needs no network. */
export function resolveCommitTarget(target: RefTarget & { kind: 'commit' }): ResolvedRef {
  const refName = fullRefName(target);
  return {
    commit: target.commit,
    ...(refName ? { refName } : {}),
    revision: revisionOf(refName, target.commit, target),
  };
}

/** The highest tag satisfying the range; `v` prefixes allowed, non-semver tags ignored. */
export function pickSemverTag(tagNames: string[], range: string): string | undefined {
  let best: { tag: string; version: string } | undefined;
  for (const tag of tagNames) {
    const version = semver.valid(tag);
    if (!version || !semver.satisfies(version, range)) continue;
    if (!best || semver.gt(version, best.version)) best = { tag, version };
  }
  return best?.tag;
}

/** Picks the ref a (non-commit) target names from the remote's refs; throws GitRefNotFoundError naming it. */
export function selectRef(refs: RemoteRef[], target: RefTarget, displayUrl: string): ResolvedRef {
  let refName: string | undefined;
  if (target.kind === 'semver') {
    const tags = refs
      .filter((r) => r.name.startsWith('refs/tags/'))
      .map((r) => r.name.slice('refs/tags/'.length));
    const tag = pickSemverTag(tags, target.range);
    if (tag) refName = `refs/tags/${tag}`;
  } else {
    refName = fullRefName(target);
  }
  const found = refName ? refs.find((r) => r.name === refName) : undefined;
  if (!found || !refName) {
    const what = describeTarget(target);
    throw new GitRefNotFoundError(`Git ${what} was not found on ${displayUrl}.`, what);
  }
  const commit = found.peeled ?? found.oid;
  return { commit, refName, revision: revisionOf(refName, commit, target) };
}

/** Parses `git ls-remote` output, folding `<tag>^{}` lines into the tag's `peeled` commit. */
export function parseLsRemote(stdout: string): RemoteRef[] {
  const byName = new Map<string, RemoteRef>();
  const peeled = new Map<string, string>();
  for (const line of stdout.split('\n')) {
    const [oid, name] = line.split('\t');
    if (!oid || !name) continue;
    if (name.endsWith('^{}')) peeled.set(name.slice(0, -3), oid);
    else byName.set(name, { name, oid });
  }
  for (const [name, oid] of peeled) {
    const ref = byName.get(name);
    if (ref) ref.peeled = oid;
  }
  return [...byName.values()];
}

/** Checks a sparse-checkout directory and returns it without leading/trailing slashes. */
export function cleanSparseDir(dir: string): string {
  const clean = dir.replace(/^\.?\/+/, '').replace(/\/+$/, '');
  if (
    clean === '' ||
    clean.startsWith('-') ||
    clean.split('/').some((p) => p === '..' || p === '.') ||
    /[*?[\\!#]/.test(clean) ||
    hasControlChar(clean)
  )
    throw new GitError(`The sparse checkout directory ${JSON.stringify(dir)} is not a plain relative path.`);
  return clean;
}

/** Accepts `src:dst` refspecs that cannot be read as options. */
export function checkRefspec(refspec: string): void {
  if (!refspec || refspec.startsWith('-') || /\s/.test(refspec) || hasControlChar(refspec))
    throw new GitError(`The push refspec ${JSON.stringify(refspec)} is not valid.`);
}
