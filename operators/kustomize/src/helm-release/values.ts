// A HelmRelease's values in Flux's order: valuesFrom in order (each merged as YAML, or set at its
// targetPath as `--set` would), then spec.values. The chart's values.yaml sits under all of them
// and is merged by Helm itself when it renders; the release record's config is what this returns.
import { createHash } from 'node:crypto';
import type { ValuesReference } from '@mooring/api';
import type { JsonObject, JsonValue } from '@mooring/helm';
import { parse } from 'yaml';
import { canonicalJSON } from '../render/cache-key.ts';

/** A valuesFrom entry cannot be used: names the entry, never its content. */
export class ValuesError extends Error {
  override name = 'ValuesError';
}

const isObject = (v: unknown): v is JsonObject => !!v && typeof v === 'object' && !Array.isArray(v);

/** Helm's MergeMaps: nested maps merge, anything else in `over` replaces what `base` had. */
export function mergeValues(base: JsonObject, over: JsonObject): JsonObject {
  const out: JsonObject = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const b = out[k];
    out[k] = isObject(b) && isObject(v) ? mergeValues(b, v) : v;
  }
  return out;
}

/** A `--set` scalar as strvals types it: booleans, null and integers, else the text. */
function typed(text: string): JsonValue {
  if (text === 'true') return true;
  if (text === 'false') return false;
  if (text === 'null') return null;
  if (/^-?(0|[1-9][0-9]{0,15})$/.test(text)) return Number(text);
  return text;
}

/** The segments of a dotted path; `\.` is a dot inside a key, as Flux's targetPath allows. */
function segments(path: string): string[] {
  const out = path
    .split(/(?<!\\)\./)
    .map((s) => s.replace(/\\\./g, '.'))
    .filter((s) => s !== '');
  if (out.length === 0 || out.some((s) => /[[\]=,]/.test(s)))
    throw new ValuesError(
      `targetPath ${JSON.stringify(path)} is not a dotted path of keys (list indexes are not supported)`,
    );
  return out;
}

/** `values` with `value` set at `path`, creating maps on the way. */
export function setAtPath(values: JsonObject, path: string, value: string): JsonObject {
  const keys = segments(path);
  const root: JsonObject = structuredClone(values);
  let cur = root;
  for (const key of keys.slice(0, -1)) {
    const next = cur[key];
    if (!isObject(next)) cur[key] = {};
    cur = cur[key] as JsonObject;
  }
  cur[keys.at(-1)!] = typed(value.trim());
  return root;
}

/** Reads one valuesFrom object's data (ConfigMap data, or a Secret's decoded data); undefined when missing. */
export type ValuesObjectReader = (
  kind: 'ConfigMap' | 'Secret',
  name: string,
) => Promise<Record<string, string> | undefined>;

/**
 * The merged values. A missing object or key is an error unless the entry is optional; the error
 * names the entry (kind, name, key) so the status says what to create.
 */
export async function composeValues(
  refs: readonly ValuesReference[],
  inline: Record<string, unknown> | undefined,
  read: ValuesObjectReader,
): Promise<JsonObject> {
  let values: JsonObject = {};
  for (const ref of refs) {
    const key = ref.valuesKey ?? 'values.yaml';
    const what = `${ref.kind} '${ref.name}'`;
    const data = await read(ref.kind, ref.name);
    if (!data) {
      if (ref.optional) continue;
      throw new ValuesError(`valuesFrom ${what} not found`);
    }
    const text = data[key];
    if (text === undefined) {
      if (ref.optional) continue;
      throw new ValuesError(`valuesFrom ${what} has no key '${key}'`);
    }
    if (ref.targetPath) {
      values = setAtPath(values, ref.targetPath, text);
      continue;
    }
    let parsed: unknown;
    try {
      parsed = parse(text, { maxAliasCount: 100 });
    } catch (err) {
      // The parser's message quotes a line of the input, which may be secret: only its position.
      const at = (err as { linePos?: { line: number }[] }).linePos?.[0]?.line;
      throw new ValuesError(`valuesFrom ${what} key '${key}' is not valid YAML${at ? ` (line ${at})` : ''}`);
    }
    if (parsed === null || parsed === undefined) continue;
    if (!isObject(parsed)) throw new ValuesError(`valuesFrom ${what} key '${key}' is not a YAML map`);
    values = mergeValues(values, parsed);
  }
  if (inline) values = mergeValues(values, inline as JsonObject);
  return values;
}

/** Flux's configDigest: sha256 of the values as canonical JSON. */
export function configDigest(values: JsonObject): string {
  return `sha256:${createHash('sha256').update(canonicalJSON(values)).digest('hex')}`;
}
