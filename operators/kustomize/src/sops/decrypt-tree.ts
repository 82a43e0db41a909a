import { createHash, timingSafeEqual } from 'node:crypto';
import { decryptValue, isCiphertext } from './cipher.ts';
import { DecryptionError } from './errors.ts';
import { formatFloat, goTimestamp } from './go-format.ts';
import type { SopsMetadata } from './metadata.ts';
import type { Leaf, Plain, TreeNode } from './tree.ts';

// getsops/sops sops.go MACOnlyEncryptedInitialization: hashed first when `mac_only_encrypted` is
// set, so such a MAC never equals one over all values.
const MAC_ONLY_ENCRYPTED_INIT = Buffer.from([
  0x8a, 0x3f, 0xd2, 0xad, 0x54, 0xce, 0x66, 0x52, 0x7b, 0x10, 0x34, 0xf3, 0xd1, 0x47, 0xbe, 0x0b, 0x0b, 0x97,
  0x5b, 0x3b, 0xf4, 0x4f, 0x72, 0xc6, 0xfd, 0xad, 0xec, 0x81, 0x76, 0xf2, 0x7d, 0x69,
]);

/**
 * Decrypts every leaf the document's sops rules mark as encrypted (in place, through the leaves'
 * setters) and verifies the MAC the way sops does (sops.go Tree.Decrypt): SHA-512 over the
 * plaintext leaves in document order, compared with the stored MAC, itself encrypted with the
 * data key and authenticated with `lastmodified`. Throws DecryptionError on any failure.
 */
export function decryptTree(root: TreeNode, meta: SopsMetadata, dataKey: Uint8Array, subject: string): void {
  const rules = compileRules(meta, subject);
  const hash = createHash('sha512');
  if (meta.macOnlyEncrypted) hash.update(MAC_ONLY_ENCRYPTED_INIT);
  const walk = (node: TreeNode, path: string[]): void => {
    if (node.kind === 'map') {
      for (const [key, child] of node.entries) walk(child, [...path, key]);
    } else if (node.kind === 'list') {
      // sops leaves list indexes out of the path (and so out of the AAD).
      for (const child of node.items) walk(child, path);
    } else if (node.value !== null) {
      const encrypted = rules(path);
      const bytes = encrypted ? decryptLeaf(node, path, dataKey, subject) : macBytes(node);
      if (!meta.macOnlyEncrypted || encrypted) hash.update(bytes);
    }
  };
  walk(root, []);
  const computed = Buffer.from(hash.digest('hex').toUpperCase(), 'utf8');
  const stored = decryptValue(meta.mac, dataKey, meta.macAad);
  if (!stored || stored.bytes.length !== computed.length || !timingSafeEqual(stored.bytes, computed)) {
    throw new DecryptionError(
      `${subject} failed its integrity check (MAC mismatch): the file was changed after it was encrypted`,
    );
  }
}

/** Decrypts one leaf, stores the typed plaintext, and returns the bytes sops hashes for it. */
function decryptLeaf(leaf: Leaf, path: string[], dataKey: Uint8Array, subject: string): Buffer {
  const where = `the value at '${path.join('.')}' of ${subject}`;
  // sops writes empty values unencrypted (aes/cipher.go isEmpty).
  if (leaf.value === '') return Buffer.alloc(0);
  if (!isCiphertext(leaf.value)) {
    throw new DecryptionError(
      `${where} is not encrypted although the file's sops rules say it must be: the file was changed after it was encrypted`,
    );
  }
  const aad = `${path.join(':')}:`;
  const decrypted = decryptValue(leaf.value, dataKey, aad);
  if (!decrypted) {
    throw new DecryptionError(
      `${where} cannot be decrypted with the file's data key: the file was changed after it was encrypted`,
    );
  }
  const text = decrypted.bytes.toString('utf8');
  const invalid = () => new DecryptionError(`${where} does not hold a valid sops '${decrypted.type}' value`);
  let plain: Plain;
  let hashed: string | Buffer;
  switch (decrypted.type) {
    case 'str':
    case 'time':
      plain = text;
      hashed = decrypted.bytes;
      break;
    case 'bytes':
      plain = text;
      hashed = decrypted.bytes;
      break;
    case 'int': {
      // strconv.Atoi: optional sign and decimal digits.
      if (!/^[+-]?\d+$/.test(text)) throw invalid();
      const big = BigInt(text);
      plain = Number.isSafeInteger(Number(big)) ? Number(big) : big;
      hashed = big.toString();
      break;
    }
    case 'float': {
      const n = Number(text);
      if (text.trim() === '' || Number.isNaN(n)) throw invalid();
      plain = n;
      hashed = formatFloat(n);
      break;
    }
    case 'bool': {
      // strconv.ParseBool, then hashed as Python's True/False like sops does.
      if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(text)) plain = true;
      else if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(text)) plain = false;
      else throw invalid();
      hashed = plain ? 'True' : 'False';
      break;
    }
    default:
      throw invalid();
  }
  leaf.set(plain);
  return typeof hashed === 'string' ? Buffer.from(hashed, 'utf8') : hashed;
}

/** The bytes sops hashes for an unencrypted leaf (sops.go ToBytes). */
function macBytes(leaf: Leaf): Buffer {
  const v = leaf.value;
  if (typeof v === 'boolean') return Buffer.from(v ? 'True' : 'False');
  if (typeof v === 'number') return Buffer.from(formatFloat(v));
  if (typeof v === 'bigint') return Buffer.from(v.toString());
  if (typeof v === 'string' && leaf.timestamp) return Buffer.from(goTimestamp(v) ?? v);
  return Buffer.from(String(v), 'utf8');
}

/** sops.go shouldBeEncrypted for the key rules (at most one rule is set; see readMetadata). */
function compileRules(meta: SopsMetadata, subject: string): (path: string[]) => boolean {
  const { unencryptedSuffix, encryptedSuffix } = meta;
  if (encryptedSuffix) return (path) => path.some((k) => k.endsWith(encryptedSuffix));
  if (meta.encryptedRegex) {
    const re = goRegExp(meta.encryptedRegex, subject);
    return (path) => path.some((k) => re.test(k));
  }
  if (meta.unencryptedRegex) {
    const re = goRegExp(meta.unencryptedRegex, subject);
    return (path) => !path.some((k) => re.test(k));
  }
  return (path) => !unencryptedSuffix || !path.some((k) => k.endsWith(unencryptedSuffix));
}

/** A Go (RE2) pattern as a JS RegExp: a leading `(?flags)` group becomes RegExp flags. */
function goRegExp(pattern: string, subject: string): RegExp {
  const m = /^\(\?([imsU]+)\)/.exec(pattern);
  const flags = m ? [...new Set(m[1]!.replace('U', ''))].join('') : '';
  try {
    return new RegExp(m ? pattern.slice(m[0].length) : pattern, flags);
  } catch {
    throw new DecryptionError(`${subject} has a sops encryption regex that cannot be compiled`);
  }
}
