// The two revisions a plan compares, read from a local Git repository with the git CLI: each
// commit's tree written to a temporary folder (git archive, so the user's worktree, index and
// .git are never touched), and the files that differ between them.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CliError } from '../cli-error.ts';

/** Runs git in `repo` and returns its stdout; a failure is a CliError with git's own last line. */
export function git(repo: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', ['-C', repo, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let err = '';
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', (e) => reject(new CliError(`cannot run git (${e.message}): install git.`)));
    child.on('close', (code) =>
      code === 0
        ? resolve(Buffer.concat(out).toString('utf8'))
        : reject(
            new CliError(
              `git ${args[0]} failed in ${repo}: ${err.trim().split('\n').pop() ?? `exit ${code}`}`,
            ),
          ),
    );
  });
}

/** The commit `ref` names in `repo` (a branch, tag, `HEAD~1`, a SHA), as its full SHA. */
export async function resolveCommit(repo: string, ref: string, flag: string): Promise<string> {
  try {
    return (
      await git(repo, ['rev-parse', '--verify', '--quiet', '--end-of-options', `${ref}^{commit}`])
    ).trim();
  } catch {
    throw new CliError(
      `${flag} ${ref} is not a commit of ${repo}: fetch it first (in CI, a shallow clone may lack the base: fetch with depth 0).`,
    );
  }
}

/** Paths that differ between the two commits; a rename shows as both its old and its new path. */
export async function changedFiles(repo: string, base: string, head: string): Promise<string[]> {
  const out = await git(repo, ['diff', '--name-only', '--no-renames', '-z', base, head, '--']);
  return out.split('\0').filter(Boolean);
}

/** The URLs of the repository's remotes (fetch URLs), to match GitRepository URLs against. */
export async function remoteUrls(repo: string): Promise<string[]> {
  const out = await git(repo, ['remote', '-v']);
  const urls = new Set<string>();
  for (const line of out.split('\n')) {
    const [, url] = line.split(/\s+/);
    if (url) urls.add(url);
  }
  return [...urls];
}

/** A commit's tree in a temporary folder, removed by `remove`. */
export interface CheckedOutTree {
  dir: string;
  remove: () => void;
}

/** Writes the commit's tree (no .git) into a new temporary folder with `git archive | tar -x`. */
export async function checkOut(repo: string, sha: string): Promise<CheckedOutTree> {
  const dir = mkdtempSync(join(tmpdir(), `mooring-plan-${sha.slice(0, 12)}-`));
  const remove = () => rmSync(dir, { recursive: true, force: true });
  try {
    await new Promise<void>((resolve, reject) => {
      const archive = spawn('git', ['-C', repo, 'archive', '--format=tar', sha], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      // tar refuses absolute and `..` member names by default; the build's confined view refuses
      // symlinks that leave the tree.
      const tar = spawn('tar', ['-x', '-f', '-', '-C', dir], { stdio: ['pipe', 'ignore', 'pipe'] });
      let err = '';
      archive.stderr.on('data', (d: Buffer) => (err += d.toString()));
      tar.stderr.on('data', (d: Buffer) => (err += d.toString()));
      archive.stdout.pipe(tar.stdin);
      let pending = 2;
      let failed = false;
      const done = (code: number | null) => {
        if (code !== 0) failed = true;
        if (--pending === 0)
          failed
            ? reject(
                new CliError(`cannot check out ${sha.slice(0, 12)}: ${err.trim() || 'git archive failed'}`),
              )
            : resolve();
      };
      archive.on('error', reject);
      tar.on('error', reject);
      archive.on('close', done);
      tar.on('close', done);
    });
  } catch (err) {
    remove();
    throw err;
  }
  return { dir, remove };
}
