// Which files a Kustomization's render may read, found without rendering: its folder and every
// file or folder its kustomization.yaml files name, followed through bases and components. Used
// only to skip Kustomizations a change cannot touch, so it errs towards too much: any string in a
// kustomization file that is a path of the tree counts, and a file it cannot parse makes the
// whole tree an input.
import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { join, posix, relative, sep } from 'node:path';
import { parse } from 'yaml';

const KUSTOMIZATION_FILES = ['kustomization.yaml', 'kustomization.yml', 'Kustomization'];

/** The folder a spec.path names, as a path from the tree root ('' for the root). */
export function specFolder(path: unknown): string {
  const p = typeof path === 'string' ? path : '';
  return posix
    .normalize(p.replace(/^\.\/?/, '') || '.')
    .replace(/^\.$/, '')
    .replace(/\/+$/, '');
}

function strings(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const v of value) strings(v, out);
  else if (value && typeof value === 'object') for (const v of Object.values(value)) strings(v, out);
  return out;
}

/** A path inside the tree with symlinks resolved, or undefined when it is missing or leaves it. */
function inside(root: string, rel: string): string | undefined {
  if (rel.startsWith('..') || posix.isAbsolute(rel)) return undefined;
  const abs = join(root, rel);
  if (!existsSync(abs)) return undefined;
  const real = relative(realpathSync(root), realpathSync(abs)).split(sep).join('/');
  return real.startsWith('..') ? undefined : real;
}

/**
 * The tree paths (folders as prefixes, files exactly) whose change may change the render of the
 * kustomization at `folder`; `['']` (everything) when a kustomization file cannot be read.
 */
export function kustomizationInputs(root: string, folder: string): string[] {
  const found = new Set<string>();
  const visit = (dir: string): boolean => {
    if (found.has(dir)) return true;
    found.add(dir);
    const file = KUSTOMIZATION_FILES.find((f) => existsSync(join(root, dir, f)));
    if (!file) return true; // generated from the folder's files, which the prefix covers
    let doc: unknown;
    try {
      doc = parse(readFileSync(join(root, dir, file), 'utf8'));
    } catch {
      return false;
    }
    for (const s of strings(doc)) {
      // generator entries are `key=path` or `path`; remote URLs cannot change with the commit
      const candidate = s.includes('=') ? s.slice(s.indexOf('=') + 1) : s;
      if (!candidate || candidate.includes('://') || candidate.includes('\n')) continue;
      const rel = inside(root, posix.normalize(posix.join(dir || '.', candidate)));
      if (rel === undefined) continue;
      if (statSync(join(root, rel)).isDirectory()) {
        if (!visit(rel)) return false;
      } else found.add(rel);
    }
    return true;
  };
  return visit(folder) ? [...found].sort() : [''];
}

/** True when one of the changed paths is an input or lies under an input folder. */
export function touches(inputs: string[], changed: string[]): boolean {
  return changed.some((file) => inputs.some((p) => p === '' || file === p || file.startsWith(`${p}/`)));
}
