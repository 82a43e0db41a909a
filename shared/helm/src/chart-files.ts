import { createHash } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { basename, join, relative, resolve, sep } from 'node:path';
import { HelmChartError, HelmMemoryError } from './errors.ts';

/** Helm's loader.MaxDecompressedFileSize: a larger file is refused unless .helmignore skips it. */
export const MAX_CHART_FILE_BYTES = 5 << 20;

/**
 * One file or directory of a chart as Helm's loader walks it, named by its slash-separated path
 * inside the chart; a link by its own path, with what it points to. hack/tools/helm-renderer's
 * chartEntry reads it.
 */
export interface ChartEntry {
  name: string;
  /** `other`: neither a file nor a directory (a socket, a device), which Helm calls irregular. */
  type: 'file' | 'dir' | 'other';
  /** A file's size; its bytes are in ChartFiles.data unless `unread`. */
  size: number;
  /** A file above MAX_CHART_FILE_BYTES, not read: Helm refuses it unless .helmignore skips it. */
  unread?: boolean;
  /** A link's target's own name, which Helm's size message gives. */
  target?: string;
}

/** A chart read for the renderer: its entries, and the bytes of each read file in entry order. */
export interface ChartFiles {
  /** The chart's directory, absolute, as Helm's messages name it (filepath.Abs). */
  root: string;
  entries: ChartEntry[];
  data: Buffer[];
  bytes: number;
  /**
   * sha256 of the entries and the bytes: what the chart is, wherever it lies. A renderer that
   * has loaded a chart of this digest keeps it (renderer-worker.ts) and renders it again without
   * being sent it.
   */
  digest: string;
}

/**
 * Reads the chart at `src` for the renderer, which gets no directory of its own: every file and
 * directory, a symbolic link read as what it points to (Helm's loader follows links the same way)
 * when it resolves inside `linksWithin` (the chart itself unless the caller names the tree it lies
 * in, e.g. the source's), one that leads out of it or back into its own path refused, so
 * nothing from outside that tree reaches the renderer. .helmignore is the renderer's to apply,
 * as Helm applies it. The files' bytes together may not exceed `maxBytes` (the renderer's
 * memory, which must hold them), and a file above Helm's size limit is not read at all.
 */
export function readChartFiles(src: string, maxBytes: number, linksWithin: string = src): ChartFiles {
  let root: string;
  let allowed: string;
  try {
    root = realpathSync(src);
    if (!statSync(root).isDirectory()) throw new HelmChartError(`chart ${src} is not a directory`);
    allowed = realpathSync(linksWithin);
  } catch (err) {
    if (err instanceof HelmChartError) throw err;
    throw new HelmChartError(`chart ${src} cannot be read: ${(err as Error).message}`);
  }
  const files: ChartFiles = { root: resolve(src), entries: [], data: [], bytes: 0, digest: '' };
  const inside = (p: string): boolean => p === allowed || p.startsWith(allowed + sep);
  const walk = (dir: string, shown: string, open: Set<string>): void => {
    for (const name of readdirSync(dir).sort()) {
      const from = join(dir, name);
      const rel = shown ? `${shown}/${name}` : name;
      let real = from;
      const st = lstatSync(from);
      if (st.isSymbolicLink()) {
        try {
          real = realpathSync(from);
        } catch {
          throw new HelmChartError(`chart file ${rel} is a link that leads nowhere`);
        }
        if (!inside(real))
          throw new HelmChartError(
            `chart file ${rel} is a link that leads out of the ${allowed === root ? 'chart' : 'tree the chart is in'}`,
          );
      }
      const target = st.isSymbolicLink() ? statSync(real) : st;
      const linkedName = real === from ? undefined : basename(real);
      if (target.isDirectory()) {
        if (open.has(real))
          throw new HelmChartError(`chart directory ${rel} links back to ${relative(root, real) || '.'}`);
        files.entries.push({ name: rel, type: 'dir', size: 0 });
        open.add(real);
        walk(real, rel, open);
        open.delete(real);
      } else if (!target.isFile()) {
        files.entries.push({ name: rel, type: 'other', size: 0 });
      } else if (target.size > MAX_CHART_FILE_BYTES && rel !== '.helmignore') {
        // Helm parses the top .helmignore whatever its size, so that one is always read.
        files.entries.push({ name: rel, type: 'file', size: target.size, unread: true, target: linkedName });
      } else {
        if (files.bytes + target.size > maxBytes) tooLarge(src, maxBytes);
        const data = readFileSync(real);
        files.bytes += data.length;
        if (files.bytes > maxBytes) tooLarge(src, maxBytes);
        files.entries.push({ name: rel, type: 'file', size: data.length, target: linkedName });
        files.data.push(data);
      }
    }
  };
  walk(root, '', new Set([root]));
  const hash = createHash('sha256').update(JSON.stringify(files.entries));
  for (const d of files.data) hash.update(d);
  files.digest = hash.digest('hex');
  return files;
}

function tooLarge(src: string, maxBytes: number): never {
  throw new HelmMemoryError(src, maxBytes, `the chart's files alone hold more than ${maxBytes} bytes`);
}

/**
 * The request as the renderer reads it at mooring_request: the JSON's length (uint32, little
 * endian), the JSON, then the files' bytes. In an ArrayBuffer of its own, so it can be
 * transferred to the renderer's worker thread instead of copied.
 */
export function encodeRequest(json: string, data: readonly Buffer[] = []): Uint8Array<ArrayBuffer> {
  const text = Buffer.from(json, 'utf8');
  const size = 4 + text.length + data.reduce((n, d) => n + d.length, 0);
  const out = new Uint8Array(new ArrayBuffer(size));
  new DataView(out.buffer).setUint32(0, text.length, true);
  out.set(text, 4);
  let at = 4 + text.length;
  for (const d of data) {
    out.set(d, at);
    at += d.length;
  }
  return out;
}
