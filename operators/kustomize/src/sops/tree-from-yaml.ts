import { type Document, isAlias, isMap, isScalar, isSeq, type Node, type Scalar as YamlScalar } from 'yaml';
import { DecryptionError } from './errors.ts';
import { goTimestamp } from './go-format.ts';
import type { Leaf, MapNode, Scalar, TreeNode } from './tree.ts';

/**
 * The tree over a parsed YAML (or JSON) document, in document order, minus the top-level `sops`
 * key; leaves write decrypted values back into the document's scalar nodes, so the document can
 * be printed again with its layout and plain comments kept.
 */
export function treeFromYaml(doc: Document, subject: string): MapNode {
  const root = doc.contents;
  if (!isMap(root))
    throw new DecryptionError(`${subject} is not a sops document: its top level is not a map`);
  const tree = mapNode(root, subject);
  tree.entries = tree.entries.filter(([k]) => k !== 'sops');
  return tree;
}

function mapNode(node: Node, subject: string): MapNode {
  if (!isMap(node)) throw new DecryptionError(`${subject} is not a map`);
  return {
    kind: 'map',
    entries: node.items.map((pair) => {
      const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
      return [key, treeNode(pair.value as Node | null, subject)];
    }),
  };
}

function treeNode(node: Node | null, subject: string): TreeNode {
  if (node === null) return { kind: 'leaf', value: null, set() {} };
  // sops writes aliases out in full, so an alias means the file was not written by sops.
  if (isAlias(node)) throw new DecryptionError(`${subject} contains a YAML alias, which sops never writes`);
  if (isMap(node)) return mapNode(node, subject);
  if (isSeq(node))
    return { kind: 'list', items: node.items.map((item) => treeNode(item as Node | null, subject)) };
  if (isScalar(node)) return scalarLeaf(node, subject);
  throw new DecryptionError(`${subject} holds a YAML node sops documents cannot contain`);
}

function scalarLeaf(node: YamlScalar, subject: string): Leaf {
  const v = node.value;
  if (!(v === null || ['string', 'number', 'boolean', 'bigint'].includes(typeof v))) {
    throw new DecryptionError(`${subject} holds a YAML value of a type sops documents cannot contain`);
  }
  const leaf: Leaf = {
    kind: 'leaf',
    value: v as Scalar,
    timestamp: node.type === 'PLAIN' && typeof v === 'string' && goTimestamp(v) !== undefined,
    set(plain) {
      leaf.value = plain;
      node.value = plain;
      // Let the printer pick quoting for the new value (a decrypted "true" must stay a string).
      node.type = undefined;
    },
  };
  return leaf;
}
