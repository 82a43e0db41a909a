import { createDecipheriv } from 'node:crypto';

/** The plaintext of one sops value and the type sops recorded for it. */
export interface DecryptedValue {
  bytes: Buffer;
  type: string;
}

// The exact shape sops writes (getsops/sops aes/cipher.go); anchored at both ends so that a value
// with anything appended is not mistaken for ciphertext.
const ENCRYPTED =
  /^ENC\[AES256_GCM,data:([A-Za-z0-9+/=]*),iv:([A-Za-z0-9+/=]+),tag:([A-Za-z0-9+/=]+),type:([a-z]+)\]$/;

/** True when `value` is a sops ciphertext string (`ENC[AES256_GCM,...]`). */
export function isCiphertext(value: unknown): value is string {
  return typeof value === 'string' && ENCRYPTED.test(value);
}

/**
 * Decrypts one sops value with the data key; `aad` is the value's path joined by `:` plus a
 * trailing `:` (or `lastmodified` for the MAC). Returns undefined when the value is not sops
 * ciphertext or fails authentication, so callers word the error without echoing the value.
 *
 * Written on node:crypto rather than through sops-age: sops-age neither exposes the data key (needed
 * to decrypt the stored MAC, whose AAD is not a path) nor keeps ciphertext out of its error messages.
 */
export function decryptValue(value: string, key: Uint8Array, aad: string): DecryptedValue | undefined {
  const m = ENCRYPTED.exec(value);
  if (!m) return undefined;
  const iv = Buffer.from(m[2]!, 'base64');
  const tag = Buffer.from(m[3]!, 'base64');
  if (iv.length === 0 || tag.length !== 16) return undefined;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: 16 });
    decipher.setAAD(Buffer.from(aad, 'utf8'));
    decipher.setAuthTag(tag);
    const bytes = Buffer.concat([decipher.update(Buffer.from(m[1]!, 'base64')), decipher.final()]);
    return { bytes, type: m[4]! };
  } catch {
    return undefined;
  }
}
