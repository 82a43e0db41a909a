import { createHash } from 'node:crypto';
import type { JsonObject, JsonValue } from './resource.ts';

/** Orders strings by their UTF-8 bytes, as Go's sort.Strings and json.Marshal's map keys do. */
export function compareUtf8(a: string, b: string): number {
  // UTF-16 units order like UTF-8 bytes until a surrogate (or U+E000 and up) decides: compare units
  // in place, without encoding, and encode only then. Sorting thousands of resources calls this a lot.
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    if (x >= 0xd800 || y >= 0xd800) return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
    return x < y ? -1 : 1;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

/** A JSON string literal as Go's encoding/json writes it: HTML-escaped `<>&`, U+2028/U+2029 escaped. */
function goJsonString(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0) as number;
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (c === 0x0a) out += '\\n';
    else if (c === 0x0d) out += '\\r';
    else if (c === 0x09) out += '\\t';
    else if (c === 0x08) out += '\\b';
    else if (c === 0x0c) out += '\\f';
    else if (c < 0x20 || ch === '<' || ch === '>' || ch === '&' || c === 0x2028 || c === 0x2029) {
      out += `\\u${c.toString(16).padStart(4, '0')}`;
    } else if (c >= 0xd800 && c <= 0xdfff)
      out += '\ufffd'; // a lone surrogate is invalid UTF-8 in Go
    else out += ch;
  }
  return `${out}"`;
}

/** Go's json.Marshal of a decoded value: map keys sorted, HTML escaping on, numbers as Go prints float64. */
export function goJsonMarshal(value: JsonValue): string {
  if (value === null) return 'null';
  if (typeof value === 'boolean') return String(value);
  if (typeof value === 'number') {
    const abs = Math.abs(value);
    if (abs !== 0 && (abs < 1e-6 || abs >= 1e21)) {
      // Go switches to exponent form outside [1e-6, 1e21) and pads the exponent to two digits.
      return value.toExponential().replace(/e([+-])(\d)$/, 'e$10$2');
    }
    return String(value);
  }
  if (typeof value === 'string') return goJsonString(value);
  if (Array.isArray(value)) return `[${value.map(goJsonMarshal).join(',')}]`;
  const keys = Object.keys(value).sort(compareUtf8);
  return `{${keys.map((k) => `${goJsonString(k)}:${goJsonMarshal(value[k] as JsonValue)}`).join(',')}}`;
}

/** kustomize's hasher.encode: the first 10 hex digits of the sha256, with 0,1,3,a,e swapped for g,h,k,m,t. */
export function encodeHash(hex: string): string {
  const swap: Record<string, string> = { '0': 'g', '1': 'h', '3': 'k', a: 'm', e: 't' };
  return Array.from(hex.slice(0, 10), (c) => swap[c] ?? c).join('');
}

function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

const isObject = (v: JsonValue | undefined): v is JsonObject =>
  v !== null && v !== undefined && typeof v === 'object' && !Array.isArray(v);

/**
 * The value kustomize's getNodeValues reads at `path`: '' when absent, the scalar's text, or the decoded map.
 * kustomize looks `metadata/name` up as a single field name, which never exists, so the name is always ''.
 */
function nodeValue(object: JsonObject, path: string): JsonValue {
  if (!(path in object)) return '';
  const v = object[path] as JsonValue;
  if (v === null) return '';
  if (typeof v === 'object') return v;
  return String(v);
}

/** The 10-character hash suffix kustomize appends to a generated ConfigMap or Secret (api/hasher/hasher.go). */
export function hashResource(object: JsonObject): string {
  const kind = object.kind;
  let encoded: string;
  if (kind === 'ConfigMap') {
    const m: JsonObject = {
      kind: 'ConfigMap',
      name: nodeValue(object, 'metadata/name'),
      data: nodeValue(object, 'data'),
    };
    if (isObject(object.binaryData)) m.binaryData = object.binaryData;
    encoded = goJsonMarshal(m);
  } else if (kind === 'Secret') {
    const m: JsonObject = {
      kind: 'Secret',
      type: nodeValue(object, 'type'),
      name: nodeValue(object, 'metadata/name'),
      data: nodeValue(object, 'data'),
    };
    if (isObject(object.stringData)) m.stringData = object.stringData;
    encoded = goJsonMarshal(m);
  } else {
    encoded = goJsonMarshal(object);
  }
  return encodeHash(sha256Hex(encoded));
}
