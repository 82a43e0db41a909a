// SOPS decryption for the kustomize operator: age keys only, MAC verified like sops itself does.
export type { DecryptionKeys } from './data-key.ts';
export { decryptFile, type SopsFileFormat } from './decrypt-file.ts';
export { buildDecrypting, FileDecryptionError } from './decrypting-fs.ts';
export { isSopsEncrypted } from './detect.ts';
export { DecryptionError } from './errors.ts';
