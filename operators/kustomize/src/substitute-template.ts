import {
  isAlias,
  isCollection,
  isMap,
  isScalar,
  isSeq,
  type Node,
  parse,
  parseDocument,
  stringify,
} from 'yaml';

// Flux's substitution writes each object as YAML, replaces references in the text and parses it
// back. Done literally, a thousand Kustomizations on one build wrote and parsed the same four
// objects a thousand times: most of the operator's CPU in flux-benchmark's shape. The text and
// where its references sit are the same every time, so they are kept per object content
// ({@link templateOf}); a reconcile then replaces only the scalars that hold a reference, each
// read as the full parse would read it, and falls back to that full parse whenever a value could
// change the text's structure.

/** `$${name...}` is an escape; `${name}`, `${name:=default}` and the rest are references. */
export const REFERENCE = /\$(\$?)\{([^{}]*)\}/g;

type PathKey = string | number;

/** One scalar whose source text holds references: where it is in the text and in the object. */
interface Slot {
  start: number;
  end: number;
  path: PathKey[];
  type: 'PLAIN' | 'QUOTE_DOUBLE' | 'QUOTE_SINGLE';
}

/** An object written as YAML, and what a substitution needs to know of that text. */
export interface Template {
  text: string;
  /** The text has no reference: nothing to substitute. */
  hasReferences: boolean;
  /** The text read back, and its slots; absent when only the full parse can substitute it. */
  base?: unknown;
  slots?: Slot[];
}

const MAX_CACHED_CHARS = 8 * 1024 * 1024;
const cache = new Map<string, Template>();
let cachedChars = 0;

/** A key that two objects share only if YAML writes them alike; undefined for what JSON cannot tell apart. */
function contentKey(manifest: unknown): string | undefined {
  try {
    return JSON.stringify(manifest, (_key, value: unknown) => {
      if (typeof value === 'number') {
        // JSON writes NaN, ±Infinity as null and -0 as 0; YAML does not.
        return Number.isFinite(value) && !Object.is(value, -0) ? value : `\u0000n${String(value)}`;
      }
      // Strings that start like the markers above get one more, so no string reads as a marker.
      if (typeof value === 'string') return value.startsWith('\u0000') ? `\u0000${value}` : value;
      if (value === undefined) return '\u0000u';
      if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
        const proto = Object.getPrototypeOf(value);
        if (proto !== Object.prototype && proto !== null) throw new NotPlainData();
      }
      if (typeof value === 'bigint' || typeof value === 'function' || typeof value === 'symbol')
        throw new NotPlainData();
      return value;
    });
  } catch (err) {
    if (err instanceof NotPlainData) return undefined;
    throw err;
  }
}

class NotPlainData extends Error {}

/** The template of `manifest`, from the cache when an object of the same content was seen. */
export function templateOf(manifest: Record<string, unknown>): Template {
  const key = contentKey(manifest);
  const cached = key === undefined ? undefined : cache.get(key);
  if (cached) {
    // Most recently used last: Map keeps insertion order.
    cache.delete(key!);
    cache.set(key!, cached);
    return cached;
  }
  const template = analyse(stringify(manifest, { lineWidth: 0 }));
  if (key !== undefined) remember(key, template);
  return template;
}

function remember(key: string, template: Template): void {
  const chars = key.length + template.text.length;
  if (chars > MAX_CACHED_CHARS / 8) return;
  cache.set(key, template);
  cachedChars += chars;
  for (const [oldest, t] of cache) {
    if (cachedChars <= MAX_CACHED_CHARS) break;
    cache.delete(oldest);
    cachedChars -= oldest.length + t.text.length;
  }
}

function analyse(text: string): Template {
  if (!text.includes('${')) return { text, hasReferences: false };
  const matches = [...text.matchAll(REFERENCE)].map((m) => [m.index, m.index + m[0].length] as const);
  if (matches.length === 0) return { text, hasReferences: true };
  const doc = parseDocument(text);
  if (doc.errors.length) return { text, hasReferences: true };
  const slots: Slot[] = [];
  if (!collect(doc.contents, [], matches, slots, text)) return { text, hasReferences: true };
  const covered = slots.reduce(
    (n, s) => n + matches.filter(([a, b]) => a >= s.start && b <= s.end).length,
    0,
  );
  if (covered !== matches.length || slots.some((s) => s.path.length === 0))
    return { text, hasReferences: true };
  slots.sort((a, b) => a.start - b.start);
  return { text, hasReferences: true, base: doc.toJS(), slots };
}

const overlaps = (matches: readonly (readonly [number, number])[], start: number, end: number) =>
  matches.some(([a, b]) => a < end && b > start);

/**
 * Walks the document and records each scalar value that holds a reference; false when a
 * reference sits where replacing one scalar alone might not read as the whole text would: a
 * block or multi-line scalar, a flow collection, anchors and aliases. A reference in a key is
 * recorded nowhere, which analyse's coverage check refuses the same way.
 */
function collect(
  node: Node | null,
  path: PathKey[],
  matches: readonly (readonly [number, number])[],
  slots: Slot[],
  text: string,
): boolean {
  if (node === null) return true;
  if (isAlias(node) || node.anchor) return false;
  const [start, end] = node.range ?? [0, 0];
  if (isScalar(node)) {
    if (!overlaps(matches, start, end)) return true;
    const type = node.type;
    if (type !== 'PLAIN' && type !== 'QUOTE_DOUBLE' && type !== 'QUOTE_SINGLE') return false;
    if (/[\n\r]/.test(text.slice(start, end))) return false;
    slots.push({ start, end, path, type });
    return true;
  }
  if (!isCollection(node)) return false;
  if (node.flow && overlaps(matches, start, end)) return false;
  if (isSeq(node)) {
    return node.items.every((item, i) => collect(item as Node | null, [...path, i], matches, slots, text));
  }
  if (isMap(node)) {
    for (const pair of node.items) {
      const key = pair.key as Node | null;
      if (!isScalar(key) || key.anchor) return false;
      // A reference in a key, or under a key no path can name, lies in no slot: analyse's
      // coverage check then leaves the object to the full parse.
      if (typeof key.value !== 'string' || key.value === '__proto__' || key.value === '<<') continue;
      if (!collect(pair.value as Node | null, [...path, key.value], matches, slots, text)) return false;
    }
    return true;
  }
  return false;
}

// Line breaks (YAML 1.1's too), control characters and byte-order marks: left to the full parse.
// biome-ignore lint/suspicious/noControlCharactersInRegex: these are the characters looked for.
const UNSAFE_ANYWHERE = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u2028\u2029\ufeff\ufffe\uffff]/;
const CORE_KEYWORDS = new Set(['null', 'Null', 'NULL', 'true', 'True', 'TRUE', 'false', 'False', 'FALSE']);
const scalarMemo = new Map<string, unknown>();

/** A plain scalar that reads alone as it reads after `key: ` or `- ` in a block: one line, no indicator, no comment. */
function isSafePlain(s: string): boolean {
  if (s === '') return true;
  if (/[\n\r\t]/.test(s) || /^\s|\s$/.test(s)) return false;
  if (s.includes(': ') || s.includes(' #') || s.endsWith(':')) return false;
  if ('?:,[]{}#&*!|>\'"%@`'.includes(s[0]!)) return false;
  if (s[0] === '-' && (s.length === 1 || s.startsWith('---'))) return false;
  return !s.startsWith('...');
}

/** What YAML's core schema reads a plain scalar as, as the full parse reads it. */
function readPlain(s: string): { value: unknown } | undefined {
  if (!isSafePlain(s)) return undefined;
  if (s === '') return { value: null };
  if (/^[A-Za-z][A-Za-z0-9_./-]*$/.test(s) && !CORE_KEYWORDS.has(s)) return { value: s };
  if (scalarMemo.has(s)) return { value: scalarMemo.get(s) };
  let value: unknown;
  try {
    value = parse(s);
  } catch {
    return undefined;
  }
  if (typeof value === 'object' && value !== null) return undefined;
  if (scalarMemo.size >= 4096) scalarMemo.clear();
  scalarMemo.set(s, value);
  return { value };
}

/** A double-quoted scalar with escapes, as the full parse reads it; undefined leaves it to that parse, which names the object in its error. */
function readQuoted(source: string): { value: unknown } | undefined {
  try {
    return { value: parse(source) };
  } catch {
    return undefined;
  }
}

/**
 * The substituted object, built from the template's parsed text with only its slots replaced, or
 * undefined when a substituted value could read differently there than in the full text (then the
 * caller parses the whole substituted text). `replace` is the text substitution itself; it may
 * throw, and is called on the slots in text order, as a replace over the whole text would be.
 */
export function fillSlots(
  template: Template,
  replace: (source: string, check: (value: string) => void) => string,
): Record<string, unknown> | undefined {
  const { base, slots, text } = template;
  if (!slots) return undefined;
  const values: { path: PathKey[]; value: unknown }[] = [];
  let safe = true;
  for (const slot of slots) {
    const quote = slot.type === 'QUOTE_DOUBLE' ? /["\\]/ : slot.type === 'QUOTE_SINGLE' ? /'/ : null;
    const source = replace(text.slice(slot.start, slot.end), (value) => {
      if (UNSAFE_ANYWHERE.test(value) || quote?.test(value)) safe = false;
    });
    // The caller's full parse replaces every slot again, so an error still comes from the first bad reference.
    if (!safe) return undefined;
    let read: { value: unknown } | undefined;
    if (slot.type === 'PLAIN') read = readPlain(source);
    else if (slot.type === 'QUOTE_SINGLE') read = { value: source.slice(1, -1).replaceAll("''", "'") };
    else {
      const inner = source.slice(1, -1);
      read = inner.includes('\\') ? readQuoted(source) : { value: inner };
    }
    if (!read) return undefined;
    values.push({ path: slot.path, value: read.value });
  }
  const out = structuredClone(base) as Record<string, unknown>;
  for (const { path, value } of values) {
    let at = out as Record<PathKey, unknown>;
    for (const key of path.slice(0, -1)) at = at[key] as Record<PathKey, unknown>;
    at[path[path.length - 1]!] = value;
  }
  return out;
}

/** For tests: forget every template. */
export function clearTemplates(): void {
  cache.clear();
  cachedChars = 0;
  scalarMemo.clear();
}
