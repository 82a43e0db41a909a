// The JSON text of a release exactly as Go's encoding/json writes Helm's structs: fields in the
// structs' declaration order with their omitempty rules, map keys sorted, and <, >, &, U+2028 and
// U+2029 escaped as Go does by default. Byte-equal JSON lets a test compare Mooring's record with
// the one `helm install` wrote, and keeps `helm get` output identical for both.
import type { ReleaseRecord } from './release-record.ts';

/** How one struct field is written: `omit` drops Go's empty values, `always` writes a default. */
type Field =
  | { key: string; omit: 'empty' | 'nil'; as?: Encoder }
  | { key: string; omit: false; empty: string; as?: Encoder };
type Encoder = (value: unknown) => string;

const omit = (key: string, as?: Encoder): Field => ({ key, omit: 'empty', as });
/** A pointer to a struct: omitempty drops it only when nil. */
const pointer = (key: string, as: Encoder): Field => ({ key, omit: 'nil', as });
const always = (key: string, empty: string, as?: Encoder): Field => ({ key, omit: false, empty, as });

/** Go's omitempty: false, 0, "", nil, and empty slices and maps. */
function isEmpty(value: unknown): boolean {
  if (value === undefined || value === null || value === false || value === 0 || value === '') return true;
  if (Array.isArray(value)) return value.length === 0;
  if (typeof value === 'object') return Object.keys(value).length === 0;
  return false;
}

/** A map or an interface{} value: keys sorted at every level, as Go marshals maps. */
function plain(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value)) return `[${value.map(plain).join(',')}]`;
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${plain(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** A struct: its declared fields in order, then any field this version of Helm's types lacks. */
function struct(fields: Field[]): Encoder {
  const known = new Set(fields.map((f) => f.key));
  return (value) => {
    if (value === null || value === undefined) return 'null';
    const obj = value as Record<string, unknown>;
    const parts: string[] = [];
    for (const f of fields) {
      const v = obj[f.key];
      if (f.omit === 'empty' && isEmpty(v)) continue;
      if (f.omit === 'nil' && (v === undefined || v === null)) continue;
      const text = v === undefined || v === null ? (f.omit ? 'null' : f.empty) : (f.as ?? plain)(v);
      parts.push(`${JSON.stringify(f.key)}:${text}`);
    }
    for (const [k, v] of Object.entries(obj)) {
      if (!known.has(k) && v !== undefined) parts.push(`${JSON.stringify(k)}:${plain(v)}`);
    }
    return `{${parts.join(',')}}`;
  };
}

/** A slice of structs; Go writes a nil slice as null. */
const list =
  (item: Encoder): Encoder =>
  (value) =>
    Array.isArray(value) ? `[${value.map(item).join(',')}]` : 'null';

const dependency = struct([
  always('name', '""'),
  omit('version'),
  always('repository', '""'),
  omit('condition'),
  omit('tags'),
  omit('enabled'),
  omit('import-values'),
  omit('alias'),
]);
const maintainer = struct([omit('name'), omit('email'), omit('url')]);
const metadata = struct([
  omit('name'),
  omit('home'),
  omit('sources'),
  omit('version'),
  omit('description'),
  omit('keywords'),
  omit('maintainers', list(maintainer)),
  omit('icon'),
  omit('apiVersion'),
  omit('condition'),
  omit('tags'),
  omit('appVersion'),
  omit('deprecated'),
  omit('annotations'),
  omit('kubeVersion'),
  omit('dependencies', list(dependency)),
  omit('type'),
]);
const lock = struct([
  always('generated', '""'),
  always('digest', '""'),
  always('dependencies', 'null', list(dependency)),
]);
const file = struct([always('name', '""'), always('data', 'null')]);
const chart = struct([
  always('metadata', 'null', metadata),
  always('lock', 'null', lock),
  always('templates', 'null', list(file)),
  always('values', 'null'),
  always('schema', 'null'),
  always('files', 'null', list(file)),
]);
const info = struct([
  omit('first_deployed'),
  omit('last_deployed'),
  always('deleted', '""'),
  omit('description'),
  omit('status'),
  omit('notes'),
  omit('resources'),
]);
const hookExecution = struct([
  always('started_at', '""'),
  always('completed_at', '""'),
  always('phase', '""'),
]);
const hook = struct([
  omit('name'),
  omit('kind'),
  omit('path'),
  omit('manifest'),
  omit('events'),
  // omitempty does not apply to a struct: Go always writes last_run.
  always('last_run', '{"started_at":"","completed_at":"","phase":""}', hookExecution),
  omit('weight'),
  omit('delete_policies'),
  omit('output_log_policies'),
]);
const release = struct([
  omit('name'),
  pointer('info', info),
  pointer('chart', chart),
  omit('config'),
  omit('manifest'),
  omit('hooks', list(hook)),
  omit('version'),
  omit('namespace'),
]);

const GO_ESCAPES: Record<string, string> = {
  '<': '\\u003c',
  '>': '\\u003e',
  '&': '\\u0026',
  '\u2028': '\\u2028',
  '\u2029': '\\u2029',
};

/** The release's JSON as Helm's encodeRelease marshals it; `labels` stay out, as `json:"-"` keeps them. */
export function releaseJson(record: ReleaseRecord): string {
  const { labels: _labels, ...rest } = record;
  // These characters can only occur inside strings, so escaping the whole text is exact.
  return release(rest).replace(/[<>&\u2028\u2029]/g, (c) => GO_ESCAPES[c] ?? c);
}
