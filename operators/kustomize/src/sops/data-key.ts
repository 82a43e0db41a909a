import { DecryptionError } from './errors.ts';
import type { SopsMetadata } from './metadata.ts';

/** Age identities as they come from a Secret's `*.agekey` values, one or more per value. */
export interface DecryptionKeys {
  ageIdentities: string[];
}

/** The `AGE-SECRET-KEY-1...` lines of every key value; comments (`# public key: ...`) are skipped. */
export function parseIdentities(keys: DecryptionKeys): string[] {
  return keys.ageIdentities.flatMap((value) =>
    value
      .split(/\r?\n/)
      .map((line) => line.trim())
      .filter((line) => line.startsWith('AGE-SECRET-KEY-1')),
  );
}

/**
 * Recovers the 32-byte data key from the document's age stanzas with any of the identities.
 * age-encryption is the age implementation sops-age itself uses; sops-age does not expose the key.
 */
export async function decryptDataKey(
  meta: SopsMetadata,
  keys: DecryptionKeys,
  subject: string,
): Promise<Uint8Array> {
  const identities = parseIdentities(keys);
  if (identities.length === 0) {
    throw new DecryptionError(
      `the decryption Secret holds no age identity (a '*.agekey' value with an AGE-SECRET-KEY-1 line) to decrypt ${subject}`,
    );
  }
  // age and its curves are loaded when a file is first decrypted, not with the operator.
  const { armor, Decrypter } = await import('age-encryption');
  const decrypter = new Decrypter();
  for (const identity of identities) {
    try {
      decrypter.addIdentity(identity);
    } catch {
      throw new DecryptionError(`the decryption Secret holds a value that is not a valid age identity`);
    }
  }
  for (const stanza of meta.age) {
    let file: Uint8Array;
    try {
      file = armor.decode(stanza.enc);
    } catch {
      continue;
    }
    try {
      const key = await decrypter.decrypt(file, 'uint8array');
      if (key.length === 32) return key;
    } catch {
      // Not for these identities (or malformed): try the next recipient.
    }
  }
  throw new DecryptionError(`no age identity in the decryption Secret can decrypt ${subject}`);
}
