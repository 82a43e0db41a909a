import { lstatSync, readFileSync, readlinkSync, realpathSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve, sep } from 'node:path';
import { ArtifactTooLargeError, packDirectory } from '@mooring/artifact';
// The source operator's sourceignore rules, so a pushed tree is filtered as a Git checkout is.
import { EXCLUDE_EXT, EXCLUDE_VCS, loadExclusionFilter } from '@mooring/source-operator/ignore-rules';
import { CliError, EXIT_ERROR } from './cli-error.ts';

/**
 * Flux's default `--ignore-paths` for `push artifact` (sourceignore ExcludeVCS + ExcludeExt):
 * Git metadata and binary or archive files. Giving `--ignore-paths` replaces the list.
 */
export const DEFAULT_IGNORE_PATHS = ['.git/', ...EXCLUDE_VCS, ...EXCLUDE_EXT];

/** The packed tree: the tar.gz bytes and what went into them. */
export interface PackedContent {
  data: Buffer;
  digest: string;
  files: number;
  /** Entries left out because they are not regular files (links inside the tree, sockets, fifos). */
  skipped: string[];
}

/** True when `target` is `root` or below it. */
function inside(root: string, target: string): boolean {
  return target === root || target.startsWith(root + sep);
}

/** Where a symlink points, resolved as far as the file system allows (a dangling link stays lexical). */
function linkTarget(abs: string): string {
  const target = resolve(dirname(abs), readlinkSync(abs));
  try {
    return realpathSync(target);
  } catch {
    return target;
  }
}

/**
 * The packer never follows links; a link that leaves the folder is refused outright, since the
 * user may believe its target is being published.
 */
function checkSkipped(root: string, skipped: string[]): void {
  for (const rel of skipped) {
    const abs = join(root, rel);
    if (lstatSync(abs).isSymbolicLink() && !inside(root, linkTarget(abs))) {
      throw new CliError(
        `${rel} is a symlink to outside --path, which is never published: replace it with the file or add it to --ignore-paths.`,
      );
    }
  }
}

/**
 * Packs `path` (a folder, or a single file) into the deterministic tar.gz of shared/artifact: the
 * same tree gives the same bytes. `ignorePaths` are .gitignore patterns relative to the folder; as
 * for a GitRepository, `.git/` is always left out and `.sourceignore` files in the tree apply too.
 */
export async function packForPush(path: string, ignorePaths: string[]): Promise<PackedContent> {
  let root: string;
  try {
    root = realpathSync(path);
  } catch (err) {
    throw new CliError(
      `--path ${path} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'}): pass an existing folder or file.`,
      EXIT_ERROR,
    );
  }
  let filter: (rel: string, isDir: boolean) => boolean;
  if (statSync(root).isDirectory()) {
    filter = await loadExclusionFilter(root, ignorePaths.join('\n'));
  } else {
    // A single file is packed alone, at the archive's root, as Flux does.
    const name = basename(root);
    root = dirname(root);
    filter = (rel) => rel !== name;
  }
  const scratch = await mkdtemp(join(tmpdir(), 'mooring-push-'));
  try {
    const out = join(scratch, 'content.tar.gz');
    const packed = await packDirectory(root, out, { filter }).catch((err: unknown) => {
      if (err instanceof ArtifactTooLargeError)
        throw new CliError(`cannot pack ${path}: ${err.message}; leave large files out with --ignore-paths.`);
      throw err;
    });
    checkSkipped(root, packed.skipped);
    return { data: readFileSync(out), digest: packed.digest, files: packed.files, skipped: packed.skipped };
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
