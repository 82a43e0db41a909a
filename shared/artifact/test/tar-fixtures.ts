// Builders for hand-made (often hostile) tar.gz fixtures; tar-stream writes whatever header it is given.
import { gzipSync } from 'node:zlib';
import { type Header, pack } from 'tar-stream';

/** One fixture entry: a header (name required) and an optional body. */
export interface FixtureEntry {
  header: Partial<Header> & { name: string };
  body?: string | Buffer;
}

/** Builds an uncompressed tar from the entries, in order, headers as given. */
export async function buildTar(entries: FixtureEntry[], trailer: Buffer = Buffer.alloc(0)): Promise<Buffer> {
  const p = pack();
  const chunks: Buffer[] = [];
  const collected = (async () => {
    for await (const c of p) chunks.push(c as Buffer);
  })();
  // Queued all at once (tar-stream serialises them); awaiting each one makes big fixtures slow.
  const written = entries.map(
    (e) =>
      new Promise<void>((resolve, reject) => {
        const cb = (err?: Error | null) => (err ? reject(err) : resolve());
        const header = { mtime: new Date(0), ...e.header };
        if (e.body !== undefined) p.entry(header, e.body, cb);
        else p.entry(header, cb);
      }),
  );
  p.finalize();
  await Promise.all(written);
  await collected;
  return Buffer.concat([...chunks, trailer]);
}

/** Builds a gzipped tar from the entries. */
export async function buildTarGz(entries: FixtureEntry[], trailer?: Buffer): Promise<Buffer> {
  return gzipSync(await buildTar(entries, trailer));
}

/** Rewrites the size field of the first header of a tar (and its checksum) to lie about the body. */
export function lieAboutFirstSize(tar: Buffer, size: number): Buffer {
  const out = Buffer.from(tar);
  out.write(`${size.toString(8).padStart(11, '0')}\0`, 124, 12, 'latin1');
  withChecksum(out.subarray(0, 512));
  return out;
}

/** A tar of `count` empty files named f0, f1, … built by patching one header (fast for huge counts). */
export async function manyEmptyFilesTar(count: number): Promise<Buffer> {
  const template = (await buildTar([{ header: { name: 'f', type: 'file' }, body: '' }])).subarray(0, 512);
  const blocks: Buffer[] = [];
  for (let i = 0; i < count; i++) {
    const h = Buffer.from(template);
    h.fill(0, 0, 100);
    h.write(`f${i}`, 0, 100, 'latin1');
    blocks.push(withChecksum(h));
  }
  blocks.push(Buffer.alloc(1024));
  return Buffer.concat(blocks);
}

function withChecksum(header: Buffer): Buffer {
  header.fill(0x20, 148, 156);
  let sum = 0;
  for (let i = 0; i < 512; i++) sum += header[i]!;
  header.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 8, 'latin1');
  return header;
}
