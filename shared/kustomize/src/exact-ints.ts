// Integers beyond 2^53 lose precision as JS numbers, while kustomize (Go int64/uint64) prints them
// exactly. Rather than widen JsonValue (every consumer, JSON.stringify included, would have to learn
// bigint), the exact decimal text rides beside the number, keyed by the map or list holding it, and the
// emitter prints it while that spot still holds the same number. A transformer that rebuilds the
// container (a JSON patch, a replacement) drops the note, and the number prints as before.
import { isMap, isScalar, isSeq, type Node } from 'yaml';
import type { JsonObject, JsonValue } from './resource.ts';

type Container = JsonObject | JsonValue[];

/** Container → key → the number stored there and its exact decimal text. */
const notes = new WeakMap<Container, Map<string | number, { value: number; text: string }>>();

/** The exact decimal of Go integer syntax (0x, 0o, 0b, legacy 0755 octal, `_` ignored), or undefined. */
export function exactGoInt(text: string): string | undefined {
  let body = text.replaceAll('_', '');
  let sign = '';
  if (body.startsWith('+') || body.startsWith('-')) {
    sign = body[0] === '-' ? '-' : '';
    body = body.slice(1);
  }
  if (/^0[0-7]+$/.test(body)) body = `0o${body.slice(1)}`;
  if (!/^(?:0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|[0-9]+)$/.test(body)) return undefined;
  const exact = BigInt(body) * (sign === '-' ? -1n : 1n);
  // Beyond int64/uint64 Go keeps the scalar a string, and the loader already did.
  if (exact >= 2n ** 64n || exact < -(2n ** 63n)) return undefined;
  return exact.toString();
}

const needsNote = (value: JsonValue | undefined): value is number =>
  typeof value === 'number' && Number.isInteger(value) && Math.abs(value) > Number.MAX_SAFE_INTEGER;

/** Cheap test on a document's text: could any integer in it exceed 2^53 (16 digits, or 14 hex digits)? */
export function mayHoldBigInts(text: string): boolean {
  return /[0-9_]{16}|0[xX][0-9a-fA-F_]{14}/.test(text);
}

/** Walks a parsed YAML node beside its JS value and notes the exact text of every big integer. */
export function noteExactInts(node: Node | null | undefined, value: JsonValue): void {
  if (node === null || node === undefined || value === null || typeof value !== 'object') return;
  if (isMap(node) && !Array.isArray(value)) {
    for (const pair of node.items) {
      if (!isScalar(pair.key) || typeof pair.key.value !== 'string') continue;
      visitChild(pair.value as Node | null, value, pair.key.value);
    }
  } else if (isSeq(node) && Array.isArray(value)) {
    for (let i = 0; i < node.items.length; i++) visitChild(node.items[i] as Node | null, value, i);
  }
}

function visitChild(node: Node | null, container: Container, key: string | number): void {
  const child = Object.hasOwn(container, key)
    ? (container as Record<string | number, JsonValue>)[key]
    : undefined;
  if (child === undefined) return;
  if (isScalar(node) && needsNote(child) && typeof node.source === 'string') {
    const text = exactGoInt(node.source);
    if (text === undefined) return;
    let map = notes.get(container);
    if (map === undefined) {
      map = new Map();
      notes.set(container, map);
    }
    map.set(key, { value: child, text });
    return;
  }
  noteExactInts(node, child);
}

/** The exact text of the big integer at container[key], if it is still the one the source held. */
export function exactIntText(container: Container, key: string | number, value: number): string | undefined {
  const note = notes.get(container)?.get(key);
  return note !== undefined && note.value === value ? note.text : undefined;
}

/** Carries the notes of a container over to its copy (deep copies keep keys and indexes). */
export function copyExactInts(from: Container, to: Container): void {
  const map = notes.get(from);
  if (map !== undefined) notes.set(to, map);
}
