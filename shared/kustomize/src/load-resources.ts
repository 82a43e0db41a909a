import {
  type Document,
  isAlias,
  isMap,
  isPair,
  isScalar,
  isSeq,
  LineCounter,
  type ScalarTag,
  type Tags,
  visit,
} from 'yaml';
import { noteBareNull } from './bare-nulls.ts';
import { KustomizeError, YamlSyntaxError } from './errors.ts';
import { mayHoldBigInts, noteExactInts } from './exact-ints.ts';
import { parseIndentingQuotedContinuations } from './quoted-continuations.ts';
import type { JsonObject, JsonValue } from './resource.ts';

/** Caps on the YAML a build parses. */
export interface YamlLimits {
  /** Aliases expanded per document (the "billion laughs" guard). */
  maxAliasCount: number;
  /** Nesting of maps and lists inside one document. */
  maxDepth: number;
}

export const defaultYamlLimits: YamlLimits = { maxAliasCount: 100, maxDepth: 100 };

const yamlStyleFloat = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/;
const timestampLike = /^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}([Tt ].*)?$/;
const timestamp =
  /^([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})(?:[Tt]([0-9]{1,2}):([0-9]{1,2}):([0-9]{1,2})(?:\.([0-9]{1,9}))?(Z|[+-][0-9]{2}:[0-9]{2})| ([0-9]{1,2}):([0-9]{1,2}):([0-9]{1,2})(?:\.([0-9]{1,9}))?)?$/;

/**
 * yaml.v3 decodes an unquoted timestamp to time.Time, which JSON prints as RFC 3339 with nanoseconds;
 * returns undefined when Go's time.Parse would fail (the text then stays a string).
 */
function goTimestamp(text: string): string | undefined {
  const m = timestamp.exec(text);
  if (!m) return undefined;
  const two = (v: string | undefined) => (v ?? '0').padStart(2, '0');
  const [year, month, day] = [m[1] as string, Number(m[2]), Number(m[3])];
  if (month < 1 || month > 12 || day < 1 || day > new Date(Date.UTC(Number(year), month, 0)).getUTCDate()) {
    return undefined;
  }
  const [h, min, sec] = [m[4] ?? m[9], m[5] ?? m[10], m[6] ?? m[11]];
  if (Number(h ?? 0) > 23 || Number(min ?? 0) > 59 || Number(sec ?? 0) > 59) return undefined;
  const fraction = (m[7] ?? m[12] ?? '').replace(/0+$/, '');
  const zone = m[8] === undefined || m[8] === 'Z' || m[8] === '+00:00' ? 'Z' : m[8];
  return `${year}-${two(String(month))}-${two(String(day))}T${two(h)}:${two(min)}:${two(sec)}${fraction ? `.${fraction}` : ''}${zone}`;
}

/** Go's strconv.ParseInt(s, 0, 64) (also accepting the uint64 range), or undefined when it fails. */
function parseGoInt(s: string): number | undefined {
  let body = s;
  let sign = 1;
  if (body.startsWith('+') || body.startsWith('-')) {
    if (body.startsWith('-')) sign = -1;
    body = body.slice(1);
  }
  let digits: RegExp;
  let base: number;
  let rest: string;
  if (/^0[xX]/.test(body)) [base, digits, rest] = [16, /^[0-9a-fA-F]+$/, body.slice(2)];
  else if (/^0[oO]/.test(body)) [base, digits, rest] = [8, /^[0-7]+$/, body.slice(2)];
  else if (/^0[bB]/.test(body)) [base, digits, rest] = [2, /^[01]+$/, body.slice(2)];
  else if (body.length > 1 && body.startsWith('0')) [base, digits, rest] = [8, /^[0-7]+$/, body.slice(1)];
  else [base, digits, rest] = [10, /^[0-9]+$/, body];
  if (!digits.test(rest)) return undefined;
  const value = Number.parseInt(rest, base) * sign;
  // Outside int64/uint64 Go fails and the scalar stays a string.
  if (value >= 2 ** 64 || value < -(2 ** 63)) return undefined;
  return value;
}

/**
 * Resolves a plain scalar that starts like a number the way yaml.v3 (kyaml) does:
 * Go integer syntax with 0x/0o/0b and legacy 0755 octal, underscores ignored, timestamps kept as strings.
 */
export function resolveGoNumber(text: string): JsonValue {
  const first = text[0];
  if (first === '.') {
    return /^\.[0-9]+([eE][-+]?[0-9]+)?$/.test(text) ? Number(text) : text;
  }
  if (timestampLike.test(text)) return goTimestamp(text) ?? text;
  const plain = text.replaceAll('_', '');
  const int = parseGoInt(plain);
  if (int !== undefined) return int;
  if (yamlStyleFloat.test(plain)) return Number(plain);
  return text;
}

// Replaces the YAML 1.2 core int and float tags: kyaml reads numbers with Go's rules (see resolveGoNumber).
const goNumberTag: ScalarTag = {
  tag: 'tag:yaml.org,2002:int',
  default: true,
  test: /^[-+.0-9]/,
  resolve: (text: string) => resolveGoNumber(text) as unknown as number,
};
const specialFloatTag: ScalarTag = {
  tag: 'tag:yaml.org,2002:float',
  default: true,
  test: /^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/,
  resolve: (text: string) =>
    text.endsWith('nan') || text.endsWith('NaN') || text.endsWith('NAN')
      ? Number.NaN
      : text.startsWith('-')
        ? -Infinity
        : Infinity,
};

const parseOptions = (limits: YamlLimits, schema: 'core' | 'yaml-1.1') => ({
  schema,
  customTags: (tags: Tags): Tags => [
    specialFloatTag,
    goNumberTag,
    ...tags.filter((t) => {
      const tag = typeof t === 'string' ? t : t.tag;
      // YAML 1.1 also brings binary, timestamp and sexagesimal forms go-yaml does not read.
      return ![
        'tag:yaml.org,2002:int',
        'tag:yaml.org,2002:float',
        'tag:yaml.org,2002:timestamp',
        'tag:yaml.org,2002:binary',
        'tag:yaml.org,2002:omap',
        'tag:yaml.org,2002:pairs',
        'tag:yaml.org,2002:set',
      ].includes(tag);
    }),
  ],
  merge: true,
  uniqueKeys: true,
  maxAliasCount: limits.maxAliasCount,
  prettyErrors: false,
  // Warnings stay on the document; printed, they would quote a tenant's file on the operator's stderr.
  logLevel: 'error' as const,
});

/** Refuses values nested deeper than maxDepth (iteratively, so a hostile document cannot blow the stack). */
function checkDepth(value: JsonValue, maxDepth: number, source: string): void {
  const stack: [JsonValue, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth >= maxDepth) {
      throw new KustomizeError(`${source}: YAML is nested more than ${maxDepth} levels deep`);
    }
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, depth + 1]);
  }
}

/** A pair's value written as nothing at all (`key:`), not as `null` or `~`. */
const isBareNullValue = (value: unknown): boolean =>
  value === null || (isScalar(value) && value.value === null && !value.source);

/**
 * kustomize cannot turn a mapping with a number, boolean or null key into JSON, so it refuses it.
 * The same walk, beside the parsed value, notes the fields left empty (see bare-nulls.ts).
 * A direct walk over maps and lists rather than yaml's visit(): this runs on every resource document,
 * and the generic visitor cost more than the rest of the loader's own work.
 */
function refuseNonStringKeys(
  node: unknown,
  value: JsonValue | undefined,
  source: string,
  lines: LineCounter,
): void {
  if (isMap(node)) {
    for (const pair of node.items) {
      const key = checkKey(pair, source, lines);
      const child =
        key !== undefined && isObject(value) && Object.hasOwn(value, key) ? value[key] : undefined;
      if (child === null && isBareNullValue(pair.value)) noteBareNull(value as JsonObject, key!);
      else refuseNonStringKeys(pair.value, child, source, lines);
    }
  } else if (isSeq(node)) {
    const list = Array.isArray(value) ? value : undefined;
    node.items.forEach((item, i) => {
      // Pairs sit in maps, and in flow lists (`[a: 1]`).
      if (isPair(item)) {
        checkKey(item, source, lines);
        refuseNonStringKeys(item.value, undefined, source, lines);
      } else refuseNonStringKeys(item, list?.[i], source, lines);
    });
  }
}

/** The pair's key when it is a string; a scalar key of another type is refused. */
function checkKey(pair: { key: unknown }, source: string, lines: LineCounter): string | undefined {
  const key = pair.key;
  if (!isScalar(key)) {
    refuseNonStringKeys(key, undefined, source, lines);
    return undefined;
  }
  if (typeof key.value !== 'string') {
    const at = key.range ? lines.linePos(key.range[0]) : undefined;
    throw new KustomizeError(
      `${source}: mapping key ${JSON.stringify(key.source ?? String(key.value))}${at ? ` at line ${at.line}, column ${at.col}` : ''} is not a string; quote it`,
    );
  }
  return key.value;
}

/**
 * kustomize rewrites metadata.annotations as a string map from the scalars' source text, so
 * `a: 0755` comes out as "0755" and an empty value as "" (only there: other fields keep their types).
 */
function keepAnnotationText(doc: Document, value: JsonValue, nullsToo = true): void {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return;
  const metadata = value.metadata;
  if (metadata === null || typeof metadata !== 'object' || Array.isArray(metadata)) return;
  const annotations = metadata.annotations;
  if (annotations === null || typeof annotations !== 'object' || Array.isArray(annotations)) return;
  const node = doc.getIn(['metadata', 'annotations'], true);
  if (!isMap(node)) return;
  for (const pair of node.items) {
    const key = isScalar(pair.key) ? String(pair.key.value) : undefined;
    if (key === undefined || typeof annotations[key] === 'string') continue;
    if (!nullsToo && annotations[key] === null) continue;
    if (pair.value === null || (isScalar(pair.value) && pair.value.value === null && !pair.value.source)) {
      annotations[key] = '';
    } else if (isScalar(pair.value)) annotations[key] = pair.value.source ?? String(pair.value.value);
  }
}

/**
 * A block scalar that ends the file on a line without a line break has no final line break in
 * go-yaml (`|` and `|+` alike, so kustomize writes `|-`); the yaml package adds one. That would change
 * a ConfigMap's content on the cluster, so the scalar that ends such a file loses the added `\n`.
 */
function dropAddedFinalBreak(doc: Document, text: string): void {
  const lastLine = text.slice(text.lastIndexOf('\n') + 1);
  if (lastLine.trim() === '') return;
  visit(doc, {
    Scalar(_key, node) {
      if (node.type !== 'BLOCK_LITERAL' && node.type !== 'BLOCK_FOLDED') return undefined;
      if (node.range?.[1] !== text.length || typeof node.value !== 'string') return undefined;
      if (node.value.endsWith('\n')) node.value = node.value.slice(0, -1);
      return visit.BREAK;
    },
  });
}

const firstLine = (message: string): string => message.split('\n')[0] ?? '';

/** Where the first alias whose anchor is not defined before it starts, or undefined when none is found. */
function unresolvedAliasOffset(doc: Document): number | undefined {
  const anchors = new Set<string>();
  let offset: number | undefined;
  visit(doc, (_key, node) => {
    if (isAlias(node)) {
      if (!anchors.has(node.source)) {
        offset = node.range?.[0];
        return visit.BREAK;
      }
    } else if ((isScalar(node) || isMap(node) || isSeq(node)) && node.anchor) anchors.add(node.anchor);
    return undefined;
  });
  return offset;
}

/**
 * Parses a multi-document YAML (or JSON) stream into plain values; comment-only documents are skipped.
 * A syntax error is a YamlSyntaxError naming `source` with the line and column where the parser stopped.
 */
export function parseYamlDocuments(
  text: string,
  source: string,
  limits: YamlLimits = defaultYamlLimits,
  /**
   * `true` for resources: annotation values keep their source text, as kustomize does. A strategic
   * merge patch keeps the text of its annotations too: `patch-as-resource` (one with a target or
   * from patchesStrategicMerge, which kustomize loads as a resource) its nulls as well (`~` becomes
   * "~"), `patch` all but its nulls, which still delete.
   */
  annotationText: boolean | 'patch' | 'patch-as-resource' = false,
  /** `yaml-1.1` reads `y`, `on`, `no` … as booleans, as sigs.k8s.io/yaml does for kustomization files. */
  schema: 'core' | 'yaml-1.1' = 'core',
  /** false for kustomization files: kustomize reads them with sigs.k8s.io/yaml, where a repeated key's last value wins. */
  uniqueKeys = true,
): JsonValue[] {
  // A cheap pre-check: the parser recurses on nesting, so refuse absurd flow nesting before parsing.
  let run = 0;
  let maxRun = 0;
  for (let i = 0; i < text.length && maxRun <= limits.maxDepth * 4; i++) {
    const c = text.charCodeAt(i);
    if (c === 91 || c === 123) maxRun = Math.max(maxRun, ++run);
    else if (c === 93 || c === 125) run = Math.max(0, run - 1);
  }
  if (maxRun > limits.maxDepth * 4) {
    throw new KustomizeError(`${source}: YAML is nested more than ${limits.maxDepth} levels deep`);
  }
  const out: JsonValue[] = [];
  // Offsets are counted over the whole stream, so a later document's lines are the file's lines.
  // The line counter of the read the documents come from (see parseIndentingQuotedContinuations).
  let lines: LineCounter | undefined;
  const syntaxError = (offset: number | undefined, reason: string): YamlSyntaxError => {
    const at = offset === undefined ? undefined : lines?.linePos(offset);
    return new YamlSyntaxError(source, at?.line, at?.col, reason);
  };
  try {
    const bigInts = mayHoldBigInts(text);
    const read = parseIndentingQuotedContinuations(text, () => ({
      ...parseOptions(limits, schema),
      uniqueKeys,
      lineCounter: new LineCounter(),
    }));
    lines = read.options.lineCounter;
    for (const doc of read.docs) {
      const error = doc.errors[0];
      if (error) throw syntaxError(error.pos[0], firstLine(error.message));
      if (doc.contents === null) continue;
      // Only the document that runs to the end of a file without a final line break.
      if (doc.range[1] === read.text.length && !read.text.endsWith('\n')) dropAddedFinalBreak(doc, read.text);
      let value: JsonValue;
      try {
        value = doc.toJS({ maxAliasCount: limits.maxAliasCount }) as JsonValue;
      } catch (error) {
        // yaml finds an alias without its anchor only here, without a position: look the alias up.
        const message = firstLine((error as Error).message);
        if (error instanceof ReferenceError && /^Unresolved alias/.test(message)) {
          throw syntaxError(unresolvedAliasOffset(doc), message);
        }
        throw error;
      }
      checkDepth(value, limits.maxDepth, source);
      if (annotationText === true) refuseNonStringKeys(doc.contents, value, source, lines);
      if (bigInts) noteExactInts(doc.contents, value);
      if (annotationText) keepAnnotationText(doc, value, annotationText !== 'patch');
      out.push(value);
    }
  } catch (error) {
    if (error instanceof KustomizeError) throw error;
    if (error instanceof RangeError) throw new KustomizeError(`${source}: YAML is nested too deeply`);
    const message = firstLine((error as Error).message);
    if (/alias/i.test(message)) {
      throw new KustomizeError(`${source}: YAML expands too many aliases (limit ${limits.maxAliasCount})`);
    }
    throw syntaxError(undefined, message);
  }
  return out;
}

const isObject = (v: JsonValue | undefined): v is JsonObject =>
  v !== null && v !== undefined && typeof v === 'object' && !Array.isArray(v);

/** Checks a manifest has a kind and a name, as kustomize's resource factory does. */
function validate(object: JsonValue, source: string): JsonObject {
  if (!isObject(object)) throw new KustomizeError(`${source}: a resource must be a mapping`);
  const kind = object.kind;
  if (typeof kind !== 'string' || kind === '') throw new KustomizeError(`${source}: missing kind in object`);
  if (!kind.endsWith('List')) {
    const metadata = object.metadata;
    const name = isObject(metadata) ? metadata.name : undefined;
    if (typeof name !== 'string' || name === '') {
      throw new KustomizeError(`${source}: missing metadata.name in object of kind ${kind}`);
    }
  }
  return object;
}

/** Parses a resource file into manifests: empty documents dropped, `*List` kinds expanded into their items. */
export function parseResources(
  text: string,
  source: string,
  limits: YamlLimits = defaultYamlLimits,
): JsonObject[] {
  const queue: JsonValue[] = [];
  for (const doc of parseYamlDocuments(text, source, limits, true)) {
    // kyaml's IsNilOrEmpty: null, an empty mapping or an empty list is no resource.
    if (doc === null || (isObject(doc) && Object.keys(doc).length === 0)) continue;
    if (Array.isArray(doc) && doc.length === 0) continue;
    queue.push(validate(doc, source));
  }
  const result: JsonObject[] = [];
  // Like kustomize, a list's items join the end of the queue (after the file's other documents).
  while (queue.length > 0) {
    const node = queue.shift() as JsonObject;
    const kind = node.kind as string;
    if (!kind.endsWith('List') || !('items' in node)) {
      result.push(node);
      continue;
    }
    const items = node.items as JsonValue;
    if (items === null) continue;
    if (!Array.isArray(items)) throw new KustomizeError(`${source}: expected a list in ${kind}/items`);
    for (const item of items) queue.push(validate(item, source));
  }
  return result;
}

/** True for a resource entry that names a remote location rather than a path inside the artifact. */
export function isRemote(entry: string): boolean {
  return (
    /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\//.test(entry) ||
    /^git@/.test(entry) ||
    /^(github\.com|gitlab\.com|bitbucket\.org)\//.test(entry) ||
    /\?ref=|\.git(\/\/|$)/.test(entry)
  );
}
