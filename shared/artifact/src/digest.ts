import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { UnsupportedDigestError } from './errors.ts';

const SHA256_DIGEST = /^sha256:([0-9a-f]{64})$/;

/** Parses `sha256:<64 lowercase hex>` and returns the hex; any other algorithm or shape throws. */
export function parseSha256Digest(digest: string): string {
  const m = SHA256_DIGEST.exec(digest);
  if (!m) throw new UnsupportedDigestError(digest);
  return m[1]!;
}

/** The sha256 of a file's bytes (streamed) and its size. */
export async function hashFile(file: string): Promise<{ digest: string; hex: string; size: number }> {
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of createReadStream(file)) {
    hash.update(chunk as Buffer);
    size += (chunk as Buffer).length;
  }
  const hex = hash.digest('hex');
  return { digest: `sha256:${hex}`, hex, size };
}
