import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gunzip, gzip } from 'node:zlib';

const gzipAsync = promisify(gzip);
const gunzipAsync = promisify(gunzip);

/** Flux's `--storage-compression-threshold`: tag lists from this size on are stored gzipped. */
export const COMPRESSION_THRESHOLD = 64 * 1024;

/** A stable hash of a tag set, independent of the order the registry listed it in. */
export function tagSetRevision(tags: readonly string[]): string {
  const sorted = [...new Set(tags)].sort();
  return `sha256:${createHash('sha256').update(sorted.join('\n')).digest('hex')}`;
}

/**
 * Tag lists on disk, one per ImageRepository: `<root>/imagerepository/<ns>/<name>/tags.txt`, one
 * tag a line, or `tags.txt.gz` at 64 KiB and above (Flux's file layout), so a restarted operator
 * chooses tags without scanning again. Writes are atomic (temp file and rename).
 */
export class TagStore {
  readonly root: string;

  constructor(root: string) {
    this.root = root;
  }

  #dir(namespace: string, name: string): string {
    // Namespaces and names are DNS labels/subdomains, so they are safe path segments.
    return join(this.root, 'imagerepository', namespace, name);
  }

  /** Stores the tags, replacing what was there. */
  async write(namespace: string, name: string, tags: readonly string[]): Promise<void> {
    const dir = this.#dir(namespace, name);
    await mkdir(dir, { recursive: true });
    const text = Buffer.from(tags.length ? `${tags.join('\n')}\n` : '');
    const compress = text.length >= COMPRESSION_THRESHOLD;
    const file = join(dir, compress ? 'tags.txt.gz' : 'tags.txt');
    const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
    await writeFile(tmp, compress ? await gzipAsync(text) : text);
    await rename(tmp, file);
    await rm(join(dir, compress ? 'tags.txt' : 'tags.txt.gz'), { force: true });
  }

  /** The stored tags, or undefined when none were stored for this object. */
  async read(namespace: string, name: string): Promise<string[] | undefined> {
    const dir = this.#dir(namespace, name);
    let text: string;
    try {
      text = (await gunzipAsync(await readFile(join(dir, 'tags.txt.gz')))).toString('utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      try {
        text = await readFile(join(dir, 'tags.txt'), 'utf8');
      } catch (err2) {
        if ((err2 as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw err2;
      }
    }
    return text.split('\n').filter((t) => t !== '');
  }

  /** Forgets the object's tags. */
  async remove(namespace: string, name: string): Promise<void> {
    await rm(this.#dir(namespace, name), { recursive: true, force: true });
  }
}
