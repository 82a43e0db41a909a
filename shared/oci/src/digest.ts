import { createHash, type Hash } from 'node:crypto';
import { RegistryProtocolError } from './errors.ts';

const HEX_LENGTH: Record<string, number> = { sha256: 64, sha512: 128 };

/** The algorithm and hex of a `sha256:<hex>` / `sha512:<hex>` digest, or a RegistryProtocolError. */
export function parseDigest(digest: string): { algorithm: 'sha256' | 'sha512'; hex: string } {
  const match = /^(sha256|sha512):([a-f0-9]+)$/.exec(digest);
  const algorithm = match?.[1] as 'sha256' | 'sha512' | undefined;
  const hex = match?.[2];
  if (!algorithm || !hex || hex.length !== HEX_LENGTH[algorithm]) {
    throw new RegistryProtocolError(
      `"${digest.slice(0, 80)}" is not a supported digest (sha256:<64 hex> or sha512:<128 hex>).`,
    );
  }
  return { algorithm, hex };
}

/** True when the string is a well-formed supported digest. */
export function isDigest(value: string): boolean {
  try {
    parseDigest(value);
    return true;
  } catch {
    return false;
  }
}

/** A hasher for the digest's algorithm. */
export function hasherFor(digest: string): Hash {
  return createHash(parseDigest(digest).algorithm);
}

/** `sha256:<hex>` of the bytes. */
export function sha256Digest(data: Buffer | string): string {
  return `sha256:${createHash('sha256').update(data).digest('hex')}`;
}

/** The bytes' digest with the same algorithm as `expected`. */
export function digestLike(expected: string, data: Buffer): string {
  const { algorithm } = parseDigest(expected);
  return `${algorithm}:${createHash(algorithm).update(data).digest('hex')}`;
}
