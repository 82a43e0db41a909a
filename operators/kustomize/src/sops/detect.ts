import { parseAllDocuments } from 'yaml';
import { isCiphertext } from './cipher.ts';

const isMap = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * True when a parsed manifest (or file text) is SOPS-encrypted: a top-level `sops` map with a
 * `mac`, and an encrypted value somewhere (the MAC itself counts).
 */
export function isSopsEncrypted(doc: unknown): boolean {
  if (typeof doc === 'string') return textIsSopsEncrypted(doc);
  if (!isMap(doc) || !isMap(doc.sops) || typeof doc.sops.mac !== 'string') return false;
  return isCiphertext(doc.sops.mac) || hasCiphertext(doc);
}

function hasCiphertext(v: unknown): boolean {
  if (isCiphertext(v)) return true;
  if (Array.isArray(v)) return v.some(hasCiphertext);
  if (isMap(v)) return Object.values(v).some(hasCiphertext);
  return false;
}

function textIsSopsEncrypted(text: string): boolean {
  if (!text.includes('sops')) return false;
  if (/^sops_mac=/m.test(text)) return /^[^#=\n]+=ENC\[AES256_GCM,/m.test(text);
  try {
    return parseAllDocuments(text, { logLevel: 'error' }).some(
      (d) => 'errors' in d && d.errors.length === 0 && isSopsEncrypted(d.toJS()),
    );
  } catch {
    return false;
  }
}
