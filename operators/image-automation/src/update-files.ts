import { lstat, readdir, readFile, realpath, writeFile } from 'node:fs/promises';
import { join, relative, resolve, sep } from 'node:path';
import type { FileChange } from './commit-message.ts';
import { applySetters, MARKER, type PolicyImage } from './setters.ts';

/** `update.path` leaves the repository, or is not a directory in it. */
export class InvalidUpdatePathError extends Error {
  override name = 'InvalidUpdatePathError';
}

/** Outcome of one pass over the work tree. */
export interface UpdateOutcome {
  files: FileChange[];
  /** Files with a marker that are not valid YAML, with the parser's first complaint. */
  skipped: { path: string; error: string }[];
}

async function* yamlFiles(dir: string): AsyncGenerator<string> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.name === '.git') continue;
    const path = join(dir, entry.name);
    // Symbolic links are never followed: they could point outside the repository.
    if (entry.isDirectory()) yield* yamlFiles(path);
    else if (entry.isFile() && /\.ya?ml$/i.test(entry.name)) yield path;
  }
}

/**
 * Applies the setters to every `.yaml`/`.yml` file under `updatePath` of the work tree `root` and
 * writes back the ones that changed. Files without the marker text are not parsed at all.
 */
export async function updateFiles(
  root: string,
  updatePath: string | undefined,
  images: ReadonlyMap<string, PolicyImage>,
): Promise<UpdateOutcome> {
  const realRoot = await realpath(root);
  const start = resolve(realRoot, updatePath ?? '.');
  if (start !== realRoot && !start.startsWith(realRoot + sep)) {
    throw new InvalidUpdatePathError(`update.path ${JSON.stringify(updatePath)} leaves the repository`);
  }
  let real: string;
  try {
    real = await realpath(start);
    if (!(await lstat(real)).isDirectory()) throw new Error('not a directory');
  } catch {
    throw new InvalidUpdatePathError(
      `update.path ${JSON.stringify(updatePath)} is not a directory in the repository`,
    );
  }
  if (real !== realRoot && !real.startsWith(realRoot + sep)) {
    throw new InvalidUpdatePathError(`update.path ${JSON.stringify(updatePath)} leaves the repository`);
  }
  const outcome: UpdateOutcome = { files: [], skipped: [] };
  for await (const file of yamlFiles(real)) {
    const text = await readFile(file, 'utf8');
    if (!text.includes(MARKER)) continue;
    const path = relative(realRoot, file).split(sep).join('/');
    let result: ReturnType<typeof applySetters>;
    try {
      result = applySetters(text, images);
    } catch (err) {
      outcome.skipped.push({ path, error: (err as Error).message });
      continue;
    }
    if (result.changes.length === 0) continue;
    await writeFile(file, result.text);
    outcome.files.push({ path, changes: result.changes });
  }
  return outcome;
}
