/**
 * A SOPS document that cannot be decrypted or whose integrity check failed. The message names the
 * object or file and what to do; it never carries plaintext, ciphertext or key material.
 */
export class DecryptionError extends Error {
  override name = 'DecryptionError';
}
