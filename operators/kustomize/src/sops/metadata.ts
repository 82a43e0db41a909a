import { DecryptionError } from './errors.ts';

/** The parts of a document's `sops` section that decryption and the MAC check depend on. */
export interface SopsMetadata {
  age: { recipient: string; enc: string }[];
  /** The AAD of the stored MAC: `lastmodified` as sops re-formats it (RFC 3339, whole seconds). */
  macAad: string;
  mac: string;
  macOnlyEncrypted: boolean;
  unencryptedSuffix?: string;
  encryptedSuffix?: string;
  unencryptedRegex?: string;
  encryptedRegex?: string;
}

const isMap = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/**
 * Reads and checks the `sops` section of a yaml/json document (or the unflattened `sops_*` lines
 * of a dotenv file); `subject` names the object or file in errors.
 */
export function readMetadata(raw: unknown, subject: string): SopsMetadata {
  if (!isMap(raw)) throw new DecryptionError(`${subject} has no sops metadata section`);
  if (raw.key_groups !== undefined || raw.shamir_threshold !== undefined) {
    throw new DecryptionError(
      `${subject} uses sops key groups (Shamir secret sharing), which are not supported`,
    );
  }
  const age = Array.isArray(raw.age)
    ? raw.age.filter(isMap).flatMap((s) => {
        const recipient = str(s.recipient);
        const enc = str(s.enc);
        return recipient && enc ? [{ recipient, enc }] : [];
      })
    : [];
  if (age.length === 0) {
    throw new DecryptionError(
      `${subject} has no age recipients: only age keys are supported for sops decryption`,
    );
  }
  const mac = str(raw.mac);
  if (!mac) throw new DecryptionError(`${subject} has no sops MAC, so its integrity cannot be verified`);
  const macAad = macAadOf(raw.lastmodified);
  if (!macAad) throw new DecryptionError(`${subject} has an invalid sops lastmodified timestamp`);
  // Comment rules depend on YAML comments, which kustomize drops before manifests reach us.
  if (str(raw.unencrypted_comment_regex) || str(raw.encrypted_comment_regex)) {
    throw new DecryptionError(
      `${subject} uses a sops comment regex (encrypted_comment_regex/unencrypted_comment_regex), which is not supported; use encrypted_regex instead`,
    );
  }
  const rules = {
    unencryptedSuffix: str(raw.unencrypted_suffix),
    encryptedSuffix: str(raw.encrypted_suffix),
    unencryptedRegex: str(raw.unencrypted_regex),
    encryptedRegex: str(raw.encrypted_regex),
  };
  const ruleCount = Object.values(rules).filter((r) => r !== undefined).length;
  if (ruleCount > 1) {
    throw new DecryptionError(
      `${subject} sets more than one sops encryption rule, which sops itself refuses`,
    );
  }
  // sops's default when no rule is stored (stores/stores.go ToInternal).
  if (ruleCount === 0) rules.unencryptedSuffix = '_unencrypted';
  const macOnly = raw.mac_only_encrypted;
  return { age, mac, macAad, macOnlyEncrypted: macOnly === true || macOnly === 'true', ...rules };
}

/** Turns dotenv `sops_*` entries (prefix removed, `\n` still escaped) into the nested metadata map. */
export function unflattenDotenvMetadata(flat: Record<string, string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const age: Record<string, string>[] = [];
  for (const [key, rawValue] of Object.entries(flat)) {
    const value = rawValue.replaceAll('\\n', '\n');
    const stanza = /^age__list_(\d+)__map_(recipient|enc)$/.exec(key);
    if (stanza) {
      const i = Number(stanza[1]);
      age[i] = { ...age[i], [stanza[2]!]: value };
    } else if (key.startsWith('key_groups__')) {
      out.key_groups = true;
    } else if (!key.includes('__')) {
      out[key] = value;
    }
  }
  out.age = age.filter(Boolean);
  return out;
}

// sops authenticates the MAC with `LastModified.Format(time.RFC3339)`: fractional seconds are
// dropped and a zero offset is written as `Z`, whatever the file holds.
function macAadOf(lastmodified: unknown): string | undefined {
  if (typeof lastmodified !== 'string') return undefined;
  const m = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.\d+)?(Z|[+-]\d\d:\d\d)$/.exec(lastmodified);
  if (!m) return undefined;
  const zone = m[2] === 'Z' || m[2] === '+00:00' || m[2] === '-00:00' ? 'Z' : m[2];
  return `${m[1]}${zone}`;
}
