import { type Document, isMap, parseAllDocuments, visit } from 'yaml';
import { decryptValue } from './cipher.ts';
import type { DecryptionKeys } from './data-key.ts';
import { decryptDataKey } from './data-key.ts';
import { decryptTree } from './decrypt-tree.ts';
import { dotenvTree, parseDotenv, printDotenv } from './dotenv.ts';
import { DecryptionError } from './errors.ts';
import { readMetadata, unflattenDotenvMetadata } from './metadata.ts';
import type { TreeNode } from './tree.ts';
import { treeFromYaml } from './tree-from-yaml.ts';

/** The file formats sops writes. */
export type SopsFileFormat = 'yaml' | 'json' | 'dotenv' | 'binary';

/**
 * Decrypts a SOPS file of any format sops writes (yaml, json, dotenv, binary) after verifying its
 * MAC, and returns the plaintext file (for generator inputs: .env files, files, yaml/json configs).
 * `name` is only used in error messages.
 */
export async function decryptFile(
  content: string,
  format: SopsFileFormat,
  keys: DecryptionKeys,
  name = `this ${format} file`,
): Promise<string> {
  if (format === 'dotenv') return decryptDotenv(content, keys, name);
  const doc = parseSingleDocument(content, format, name);
  const tree = treeFromYaml(doc, name);
  const meta = readMetadata((doc.toJS() as Record<string, unknown>).sops, name);
  decryptTree(tree, meta, await decryptDataKey(meta, keys, name), name);
  if (format === 'binary') {
    const data = tree.entries.find(([k]) => k === 'data')?.[1];
    if (data?.kind !== 'leaf' || typeof data.value !== 'string') {
      throw new DecryptionError(`${name} is not a sops binary file: it has no string 'data' value`);
    }
    return data.value;
  }
  if (format === 'json') return `${printJson(tree, '')}\n`;
  if (isMap(doc.contents)) doc.contents.delete('sops');
  dropEncryptedComments(doc);
  return doc.toString();
}

function parseSingleDocument(content: string, format: SopsFileFormat, name: string): Document {
  let docs: Document[];
  try {
    // JSON is YAML 1.2, and the YAML parser keeps key order where JSON.parse would not.
    docs = parseAllDocuments(content, {
      intAsBigInt: true,
      uniqueKeys: true,
      logLevel: 'error',
    }) as Document[];
  } catch {
    docs = [];
  }
  if (!Array.isArray(docs) || docs.length !== 1 || docs[0]!.errors.length > 0) {
    throw new DecryptionError(
      `${name} is not a single valid ${format === 'yaml' ? 'YAML' : 'JSON'} document`,
    );
  }
  return docs[0]!;
}

async function decryptDotenv(content: string, keys: DecryptionKeys, name: string): Promise<string> {
  const lines = parseDotenv(content);
  if (!lines) throw new DecryptionError(`${name} is not a valid dotenv file`);
  const flat: Record<string, string> = {};
  const body = lines.filter((line) => {
    if (!('key' in line) || !line.key.startsWith('sops_')) return true;
    flat[line.key.slice('sops_'.length)] = line.value;
    return false;
  });
  const meta = readMetadata(unflattenDotenvMetadata(flat), name);
  const dataKey = await decryptDataKey(meta, keys, name);
  decryptTree(dotenvTree(body), meta, dataKey, name);
  // Comments are outside the MAC; like sops, decrypt those that were encrypted (their path is the
  // empty one, AAD ':') and keep any that do not decrypt as they are.
  for (const line of body) {
    if ('comment' in line)
      line.comment = decryptValue(line.comment, dataKey, ':')?.bytes.toString('utf8') ?? line.comment;
  }
  return printDotenv(body);
}

// Comments are not covered by the MAC; sops-encrypted ones are dropped rather than decrypted,
// since generators never read comments.
function dropEncryptedComments(doc: Document): void {
  const clean = (c: string | null | undefined) =>
    c
      ?.split('\n')
      .filter((line) => !line.trimStart().startsWith('ENC[AES256_GCM,'))
      .join('\n') || undefined;
  doc.commentBefore = clean(doc.commentBefore) ?? null;
  doc.comment = clean(doc.comment) ?? null;
  visit(doc, (_key, node) => {
    if (node && typeof node === 'object' && 'commentBefore' in node) {
      const n = node as { commentBefore?: string | null; comment?: string | null };
      n.commentBefore = clean(n.commentBefore);
      n.comment = clean(n.comment);
    }
  });
}

/** JSON text from the tree, in document order (JSON.stringify of an object would reorder). */
function printJson(node: TreeNode, indent: string): string {
  const inner = `${indent}\t`;
  if (node.kind === 'leaf') {
    return typeof node.value === 'bigint' ? node.value.toString() : JSON.stringify(node.value);
  }
  if (node.kind === 'list') {
    if (node.items.length === 0) return '[]';
    return `[\n${node.items.map((item) => inner + printJson(item, inner)).join(',\n')}\n${indent}]`;
  }
  if (node.entries.length === 0) return '{}';
  return `{\n${node.entries.map(([k, v]) => `${inner}${JSON.stringify(k)}: ${printJson(v, inner)}`).join(',\n')}\n${indent}}`;
}
