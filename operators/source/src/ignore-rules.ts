import { readdir, readFile } from 'node:fs/promises';
import { join, posix } from 'node:path';
import ignore, { type Ignore } from 'ignore';

/** Never in an artifact, whatever the rules say: the repository's own metadata. */
const ALWAYS_EXCLUDED = ['.git/'];

/** Version-control files (fluxcd/pkg sourceignore's VCS group). */
export const EXCLUDE_VCS = ['.gitignore', '.gitmodules', '.gitattributes'];

/** Images, video and archives (sourceignore's extension group). */
export const EXCLUDE_EXT = ['*.jpg', '*.jpeg', '*.gif', '*.png', '*.wmv', '*.flv', '*.tar.gz', '*.zip'];

/** CI and tool configuration (sourceignore's CI group). */
const EXCLUDE_CI = [
  '.github/',
  '.circleci/',
  '.travis.yml',
  '.gitlab-ci.yml',
  'appveyor.yml',
  '.drone.yml',
  'cloudbuild.yaml',
  'codeship-services.yml',
  'codeship-steps.yml',
  '**/.goreleaser.yml',
  '**/.sops.yaml',
  '**/.flux.yaml',
];

/** Flux's default exclusions for a GitRepository: VCS files, binaries, CI configuration. */
const DEFAULT_EXCLUSIONS = [...EXCLUDE_VCS, ...EXCLUDE_EXT, ...EXCLUDE_CI];

const SOURCEIGNORE = '.sourceignore';

/** One `.sourceignore` file's patterns, which apply below the folder it sits in. */
interface ScopedRules {
  dir: string;
  matcher: Ignore;
}

/** True when the path (POSIX, relative to the root) is left out of the artifact; `packDirectory`'s filter. */
type ExclusionFilter = (relPath: string, isDir: boolean) => boolean;

/**
 * What to leave out of a checkout's artifact: `.git` always excluded; then Flux's default exclusions, which
 * `spec.ignore` replaces when set (as Flux documents); then every `.sourceignore` in the tree, each
 * scoped to its folder, in gitignore syntax (so `!pattern` re-includes).
 */
export async function loadExclusionFilter(
  root: string,
  specIgnore: string | undefined,
): Promise<ExclusionFilter> {
  const always = ignore().add(ALWAYS_EXCLUDED);
  const top = ignore().add(specIgnore === undefined ? DEFAULT_EXCLUSIONS : specIgnore.split(/\r?\n/));
  const scoped = await findSourceIgnores(root, always);
  return (relPath, isDir) => {
    const candidate = isDir ? `${relPath}/` : relPath;
    if (always.ignores(candidate)) return true;
    // As in git, the deepest file that has an opinion wins, so a nested `!pattern` re-includes.
    let excluded = top.ignores(candidate);
    for (const rules of scoped) {
      let local: string;
      if (rules.dir === '') local = candidate;
      else if (relPath.startsWith(`${rules.dir}/`)) local = candidate.slice(rules.dir.length + 1);
      else continue;
      const verdict = rules.matcher.test(local);
      if (verdict.ignored) excluded = true;
      else if (verdict.unignored) excluded = false;
    }
    return excluded;
  };
}

/** Reads `.sourceignore` files, skipping folders the top-level rules already exclude. */
async function findSourceIgnores(root: string, always: Ignore): Promise<ScopedRules[]> {
  const found: ScopedRules[] = [];
  const walk = async (rel: string): Promise<void> => {
    const entries = await readdir(join(root, rel), { withFileTypes: true });
    for (const e of entries) {
      if (e.isFile() && e.name === SOURCEIGNORE) {
        const text = await readFile(join(root, rel, e.name), 'utf8');
        found.push({ dir: rel, matcher: ignore().add(text.split(/\r?\n/)) });
      }
    }
    for (const e of entries) {
      // Symlinked folders are never followed: they do not go into the artifact either.
      if (!e.isDirectory()) continue;
      const child = rel === '' ? e.name : posix.join(rel, e.name);
      if (!always.ignores(`${child}/`)) await walk(child);
    }
  };
  await walk('');
  // Shallower files first, so deeper ones get the last word.
  return found.sort((a, b) => a.dir.split('/').length - b.dir.split('/').length);
}
