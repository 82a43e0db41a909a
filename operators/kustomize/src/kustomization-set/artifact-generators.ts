import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, join, posix } from 'node:path';
import type { LeafGenerator } from '@mooring/api';
import { parse } from 'yaml';
import type { Params } from './template.ts';

/** The extracted, digest-verified artifact of a generator's source (the operator's ArtifactCache). */
export type ReadArtifact = (
  sourceRef: NonNullable<LeafGenerator['directories']>['sourceRef'],
) => Promise<{ dir: string }>;

const MAX_FILE_BYTES = 1024 * 1024;
const MAX_ELEMENTS = 10_000;

/** A glob as a regular expression: `**` any depth, `*` and `?` within one path segment. */
export function globToRegExp(glob: string): RegExp {
  const clean = posix.normalize(glob).replace(/^\.\/|\/$/g, '');
  let out = '';
  for (let i = 0; i < clean.length; i++) {
    const c = clean[i]!;
    if (c === '*' && clean[i + 1] === '*') {
      out += clean[i + 2] === '/' ? '(?:.*/)?' : '.*';
      i += clean[i + 2] === '/' ? 2 : 1;
    } else if (c === '*') out += '[^/]*';
    else if (c === '?') out += '[^/]';
    else out += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${out}$`);
}

/** Every path under `root`, relative and with `/`, folders and files apart; links are not followed. */
async function walk(root: string): Promise<{ dirs: string[]; files: string[] }> {
  const dirs: string[] = [];
  const files: string[] = [];
  const visit = async (rel: string): Promise<void> => {
    for (const entry of await readdir(join(root, rel), { withFileTypes: true })) {
      const path = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        dirs.push(path);
        await visit(path);
      } else if (entry.isFile()) files.push(path);
    }
  };
  await visit('');
  return { dirs: dirs.sort(), files: files.sort() };
}

/** One element per folder of the artifact that a `paths` glob matches and no `exclude` glob does. */
export async function directoryElements(
  gen: NonNullable<LeafGenerator['directories']>,
  read: ReadArtifact,
): Promise<Params[]> {
  const { dir } = await read(gen.sourceRef);
  const include = gen.paths.map(globToRegExp);
  const exclude = (gen.exclude ?? []).map(globToRegExp);
  const { dirs } = await walk(dir);
  return dirs
    .filter((d) => include.some((r) => r.test(d)) && !exclude.some((r) => r.test(d)))
    .map((d) => ({ directory: { path: d, name: basename(d) } }));
}

/** Elements read from the artifact's YAML/JSON files that a `paths` glob matches. */
export async function fileElements(
  gen: NonNullable<LeafGenerator['files']>,
  read: ReadArtifact,
): Promise<Params[]> {
  const { dir } = await read(gen.sourceRef);
  const include = gen.paths.map(globToRegExp);
  const { files } = await walk(dir);
  const out: Params[] = [];
  for (const f of files.filter((p) => include.some((r) => r.test(p)))) {
    const full = join(dir, f);
    if ((await stat(full)).size > MAX_FILE_BYTES) throw new Error(`${f} is larger than 1 MiB`);
    let doc: unknown;
    try {
      doc = parse(await readFile(full, 'utf8'), { maxAliasCount: 100 });
    } catch (err) {
      throw new Error(`${f} is not YAML or JSON: ${(err as Error).message}`);
    }
    const items = Array.isArray(doc) ? doc : [doc];
    for (const [i, item] of items.entries()) {
      if (item === null || typeof item !== 'object' || Array.isArray(item))
        throw new Error(`${f}${Array.isArray(doc) ? ` item ${i + 1}` : ''} is not a map of parameters`);
      out.push({ ...(item as Params), file: { path: f, name: basename(f) } });
      if (out.length > MAX_ELEMENTS) throw new Error(`more than ${MAX_ELEMENTS} elements`);
    }
  }
  return out;
}
