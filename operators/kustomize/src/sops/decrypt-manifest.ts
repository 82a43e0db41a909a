import { isCiphertext } from './cipher.ts';
import { type DecryptionKeys, decryptDataKey } from './data-key.ts';
import { decryptTree } from './decrypt-tree.ts';
import { readMetadata } from './metadata.ts';
import { treeFromObject } from './tree-from-object.ts';

/**
 * Decrypts one SOPS-encrypted Kubernetes manifest (YAML/JSON object form) after verifying its MAC;
 * returns the plaintext object (without the `sops` key). The input is not modified.
 */
export async function decryptManifest(
  obj: Record<string, unknown>,
  keys: DecryptionKeys,
): Promise<Record<string, unknown>> {
  const subject = describe(obj);
  const meta = readMetadata(obj.sops, subject);
  const { root, copy } = treeFromObject(obj, subject);
  decryptTree(root, meta, await decryptDataKey(meta, keys, subject), subject);
  return copy;
}

/** `Kind/namespace/name` from whatever of those is readable (they may themselves be encrypted). */
function describe(obj: Record<string, unknown>): string {
  const plain = (v: unknown) => (typeof v === 'string' && v !== '' && !isCiphertext(v) ? v : undefined);
  const meta = (obj.metadata ?? {}) as Record<string, unknown>;
  const kind = plain(obj.kind);
  const name = plain(meta.name);
  if (!kind && !name) return 'the encrypted object';
  const ns = plain(meta.namespace);
  return `${kind ?? 'object'}/${ns ? `${ns}/` : ''}${name ?? '(encrypted name)'}`;
}
