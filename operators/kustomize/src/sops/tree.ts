// The document model the walk runs over: maps keep their key order (JS objects would move
// integer-like keys first, and the MAC depends on document order).

/** A scalar as a parser gives it; `null` leaves are skipped by sops entirely. */
export type Scalar = string | number | boolean | bigint | null;

/** A decrypted scalar: sops values decrypt to str, int, float, bool, time (as text) or bytes (as text). */
export type Plain = string | number | boolean | bigint;

export interface Leaf {
  kind: 'leaf';
  value: Scalar;
  /** True for a YAML plain scalar that yaml.v3 (inside sops) reads as a timestamp. */
  timestamp?: boolean;
  /** Replaces the value in the underlying document and in `value`. */
  set(plain: Plain): void;
}

export interface MapNode {
  kind: 'map';
  entries: [string, TreeNode][];
}

export interface ListNode {
  kind: 'list';
  items: TreeNode[];
}

export type TreeNode = Leaf | MapNode | ListNode;
