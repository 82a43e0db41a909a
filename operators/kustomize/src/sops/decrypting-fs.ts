import { posix } from 'node:path';
import { DECRYPT_ANNOTATION, DECRYPT_DISABLED } from '@mooring/api';
import type { ConfinedFs } from '@mooring/kustomize';
import { parse as parseYaml } from 'yaml';
import type { DecryptionKeys } from './data-key.ts';
import { decryptFile, type SopsFileFormat } from './decrypt-file.ts';

/** A SOPS file the build read that cannot be decrypted; `file` is its path in the artifact. */
export class FileDecryptionError extends Error {
  override name = 'FileDecryptionError';
  readonly file: string;

  constructor(file: string, reason: Error) {
    super(`decrypting ${file}: ${reason.message}`);
    this.file = file;
  }
}

/** What one file of the tree reads as: itself, its plaintext, or the reason it has none. */
type Entry = { plain: true } | { text: Buffer } | { error: FileDecryptionError };

/**
 * Runs `build` on a view of the tree in which each SOPS file it reads (manifests, patches, the
 * dotenv, yaml, json and binary files generators read) reads as its plaintext, the MAC checked on
 * the file as it was encrypted. Only what the build reads is decrypted: a file elsewhere in the
 * artifact, even one that fails its MAC, concerns nobody whose build does not load it. Manifests
 * annotated `kustomize.mooring.dev/decrypt: Disabled` read as they are. The tree is not modified.
 *
 * The engine reads synchronously and age is asynchronous, so decryption happens between passes: a
 * pass reads each encrypted file it has not seen before as it is and notes it; those are then
 * decrypted and the build runs again, until a pass reads nothing new. That pass's result (or error)
 * is the build's. Every pass but the last is thrown away, so a usual build takes two passes; each
 * further one is caused by an encrypted file the previous pass did not reach. `open` gives a fresh
 * view (with fresh read limits) for each pass.
 */
export async function buildDecrypting<T>(
  open: () => ConfinedFs,
  keys: DecryptionKeys,
  build: (fs: ConfinedFs) => Promise<T>,
): Promise<T> {
  // By real path, so a file read through a symlink is decrypted once and named as itself.
  const entries = new Map<string, Entry>();
  for (;;) {
    const unseen = new Map<string, { text: string; format: SopsFileFormat }>();
    let failure: FileDecryptionError | undefined;
    const inner = open();
    const fs: ConfinedFs = {
      root: inner.root,
      readDir: (rel) => inner.readDir(rel),
      isDir: (rel) => inner.isDir(rel),
      exists: (rel) => inner.exists(rel),
      realPath: (rel) => inner.realPath(rel),
      readFile(rel) {
        // Read through the inner view every time, so confinement and its limits apply as without decryption.
        const raw = inner.readFile(rel);
        if (!raw.includes('sops')) return raw;
        const file = inner.realPath(rel) ?? rel;
        const entry = entries.get(file);
        if (entry && 'text' in entry) return entry.text;
        if (entry && 'error' in entry) {
          failure ??= entry.error;
          throw entry.error;
        }
        if (entry || unseen.has(file)) return raw;
        const text = raw.toString('utf8');
        const format = sopsFileFormat(posix.basename(file), text);
        if (format) unseen.set(file, { text, format });
        else entries.set(file, { plain: true });
        return raw;
      },
    };
    let outcome: { value: T } | { error: unknown };
    try {
      outcome = { value: await build(fs) };
    } catch (error) {
      outcome = { error };
    }
    // The engine may wrap what readFile throws; the file's own error is the one to report.
    if (failure) throw failure;
    if (unseen.size === 0) {
      if ('error' in outcome) throw outcome.error;
      return outcome.value;
    }
    for (const [file, { text, format }] of unseen) {
      try {
        entries.set(file, { text: Buffer.from(await decryptFile(text, format, keys, file), 'utf8') });
      } catch (err) {
        // Reported only if the next pass reads the file again.
        entries.set(file, { error: new FileDecryptionError(file, err as Error) });
      }
    }
  }
}

/** The sops format of a file, or undefined for plain files and opted-out manifests. */
export function sopsFileFormat(name: string, text: string): SopsFileFormat | undefined {
  if (/^sops_mac=/m.test(text)) return 'dotenv';
  const trimmed = text.trimStart();
  if (trimmed.startsWith('{')) {
    try {
      const doc = JSON.parse(text) as Record<string, unknown>;
      if (!doc.sops) return undefined;
      if (doc.kind) return optedOut(doc) ? undefined : 'json';
      return name.endsWith('.json') ? 'json' : 'binary';
    } catch {
      return undefined;
    }
  }
  if (!/^sops:\s*$/m.test(text)) return undefined;
  try {
    const doc = parseYaml(text) as Record<string, unknown> | null;
    if (!doc || typeof doc !== 'object' || !doc.sops) return undefined;
    return optedOut(doc) ? undefined : 'yaml';
  } catch {
    // Several documents in one file: sops never writes those, so it is not a sops file.
    return undefined;
  }
}

function optedOut(doc: Record<string, unknown>): boolean {
  const annotations = (doc.metadata as { annotations?: Record<string, string> } | undefined)?.annotations;
  return annotations?.[DECRYPT_ANNOTATION] === DECRYPT_DISABLED;
}
