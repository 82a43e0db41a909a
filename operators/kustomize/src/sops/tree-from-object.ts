import { DecryptionError } from './errors.ts';
import { type Leaf, type MapNode, propertyLeaf, type Scalar, type TreeNode } from './tree.ts';

/**
 * A deep copy of `obj` without its `sops` key, and the tree over that copy whose leaves write
 * decrypted values into it. Key order is the object's own property order.
 */
export function treeFromObject(
  obj: Record<string, unknown>,
  subject: string,
): { root: MapNode; copy: Record<string, unknown> } {
  const { sops: _metadata, ...rest } = obj;
  const copy = structuredClone(rest);
  return { root: mapNode(copy, subject), copy };
}

function mapNode(obj: Record<string, unknown>, subject: string): MapNode {
  return { kind: 'map', entries: Object.keys(obj).map((k) => [k, node(obj, k, obj[k], subject)]) };
}

function node(
  holder: Record<string, unknown> | unknown[],
  key: string | number,
  value: unknown,
  subject: string,
): TreeNode {
  if (Array.isArray(value)) return { kind: 'list', items: value.map((v, i) => node(value, i, v, subject)) };
  if (value === undefined) return propertyLeaf(holder, key, null);
  if (isScalar(value)) return propertyLeaf(holder, key, value) satisfies Leaf;
  if (typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    return mapNode(value as Record<string, unknown>, subject);
  }
  throw new DecryptionError(`${subject} holds a value of a type that sops documents cannot contain`);
}

const isScalar = (v: unknown): v is Scalar =>
  v === null || ['string', 'number', 'boolean', 'bigint'].includes(typeof v);
