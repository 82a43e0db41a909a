import { readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { posix, resolve, sep } from 'node:path';
import { KustomizeError } from './errors.ts';

/** Caps that bound what one build may read. */
export interface FsLimits {
  /** Files read (readFile) plus directory entries listed, over the life of the view. */
  maxFiles: number;
  /** Bytes read over the life of the view. */
  maxTotalBytes: number;
  /** Bytes in any one file. */
  maxFileBytes: number;
}

/** A read-only view of one directory tree; every path is relative to its root, in POSIX form. */
export interface ConfinedFs {
  readonly root: string;
  readFile(rel: string): Buffer;
  readDir(rel: string): string[];
  isDir(rel: string): boolean;
  exists(rel: string): boolean;
  /** The path with symlinks resolved, relative to the root ('' for the root); undefined when missing. */
  realPath(rel: string): string | undefined;
}

export const defaultFsLimits: FsLimits = {
  maxFiles: 20_000,
  maxTotalBytes: 256 * 1024 * 1024,
  maxFileBytes: 32 * 1024 * 1024,
};

/**
 * Normalises a path relative to the root and refuses anything that could leave it.
 * Returns '' for the root itself.
 */
export function normalizeRel(rel: string): string {
  if (rel.includes('\0')) throw new KustomizeError(`path ${JSON.stringify(rel)} contains a NUL byte`);
  if (rel.includes('\\')) throw new KustomizeError(`path ${JSON.stringify(rel)} contains a backslash`);
  if (posix.isAbsolute(rel) || /^[A-Za-z]:/.test(rel)) {
    throw new KustomizeError(`absolute path ${JSON.stringify(rel)} is not allowed: paths must be relative`);
  }
  const normal = posix.normalize(rel === '' ? '.' : rel);
  if (normal === '..' || normal.startsWith('../')) {
    throw new KustomizeError(`path ${JSON.stringify(rel)} leaves the root directory`);
  }
  if (normal === '.' || normal === './') return '';
  return normal.endsWith('/') ? normal.slice(0, -1) : normal;
}

/**
 * Creates a read-only view of rootDir that never reads outside it.
 * Symlinks are resolved with realpath and allowed only when their target stays inside the root
 * (git checkouts often link files within a repo; links out of it are refused).
 */
export function createConfinedFs(rootDir: string, limits?: Partial<FsLimits>): ConfinedFs {
  const caps: FsLimits = { ...defaultFsLimits, ...limits };
  let realRoot: string;
  try {
    realRoot = realpathSync(rootDir);
  } catch {
    throw new KustomizeError(`root directory ${rootDir} does not exist`);
  }
  let files = 0;
  let bytes = 0;

  /** Resolves rel to a real absolute path inside the root, or undefined when it does not exist. */
  const locate = (rel: string): string | undefined => {
    const normal = normalizeRel(rel);
    const abs = normal === '' ? realRoot : resolve(realRoot, normal);
    let real: string;
    try {
      real = realpathSync(abs);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      if ((error as NodeJS.ErrnoException).code === 'ELOOP') {
        throw new KustomizeError(`path ${JSON.stringify(rel)} is a symlink loop`);
      }
      throw new KustomizeError(`cannot resolve path ${JSON.stringify(rel)}`);
    }
    if (real !== realRoot && !real.startsWith(realRoot + sep)) {
      throw new KustomizeError(`path ${JSON.stringify(rel)} is a symlink that leaves the root directory`);
    }
    return real;
  };

  const countFiles = (n: number, rel: string): void => {
    files += n;
    if (files > caps.maxFiles) {
      throw new KustomizeError(
        `too many files: reading ${JSON.stringify(rel)} exceeds the limit of ${caps.maxFiles}`,
      );
    }
  };

  return {
    root: realRoot,
    readFile(rel) {
      const real = locate(rel);
      if (real === undefined) throw new KustomizeError(`file ${JSON.stringify(rel)} does not exist`);
      const stat = statSync(real);
      if (!stat.isFile()) throw new KustomizeError(`${JSON.stringify(rel)} is not a regular file`);
      if (stat.size > caps.maxFileBytes) {
        throw new KustomizeError(
          `file ${JSON.stringify(rel)} is ${stat.size} bytes, over the limit of ${caps.maxFileBytes}`,
        );
      }
      countFiles(1, rel);
      if (bytes + stat.size > caps.maxTotalBytes) {
        throw new KustomizeError(
          `reading ${JSON.stringify(rel)} exceeds the total limit of ${caps.maxTotalBytes} bytes`,
        );
      }
      const content = readFileSync(real);
      // The file may have grown between stat and read.
      if (content.length > caps.maxFileBytes) {
        throw new KustomizeError(
          `file ${JSON.stringify(rel)} is over the limit of ${caps.maxFileBytes} bytes`,
        );
      }
      bytes += content.length;
      return content;
    },
    readDir(rel) {
      const real = locate(rel);
      if (real === undefined) throw new KustomizeError(`directory ${JSON.stringify(rel)} does not exist`);
      const names = readdirSync(real).sort();
      countFiles(names.length, rel);
      return names;
    },
    isDir(rel) {
      const real = locate(rel);
      return real !== undefined && statSync(real).isDirectory();
    },
    exists(rel) {
      return locate(rel) !== undefined;
    },
    realPath(rel) {
      const real = locate(rel);
      if (real === undefined) return undefined;
      return real === realRoot
        ? ''
        : real
            .slice(realRoot.length + 1)
            .split(sep)
            .join('/');
    },
  };
}

/**
 * Resolves a file named in the kustomization in `dir`. With `rootOnly` (kustomize's default load
 * restriction) the file must sit in or below `dir`; Flux builds with no restriction beyond the fs root.
 */
export function fileInDir(dir: string, path: string, rootOnly: boolean, fs?: ConfinedFs): string {
  if (posix.isAbsolute(path)) {
    throw new KustomizeError(`absolute path ${JSON.stringify(path)} is not allowed: paths must be relative`);
  }
  const rel = normalizeRel(dir === '' ? path : `${dir}/${path}`);
  if (!rootOnly) return rel;
  const inside = (file: string, folder: string): boolean =>
    folder === '' || file === folder || file.startsWith(`${folder}/`);
  // Like kustomize, judge by the paths with symlinks resolved: a link in dir may not reach out of it.
  const realFile = fs?.realPath(rel) ?? rel;
  const realDir = fs?.realPath(dir) ?? dir;
  if (!inside(rel, dir) || !inside(realFile, realDir)) {
    throw new KustomizeError(`security; file '${rel}' is not in or below '${dir}'`);
  }
  return rel;
}
