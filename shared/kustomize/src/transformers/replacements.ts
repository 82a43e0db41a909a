import { KustomizeError } from '../errors.ts';
import { resolveGoNumber } from '../load-resources.ts';
import { effectiveNamespace, idOf, isObject, isSelected, objectAt } from '../res-id.ts';
import type { JsonObject, JsonValue, ResId, Resource } from '../resource.ts';
import { matchesSelector, parseSelector } from './label-selector.ts';

/** kustomize's FieldOptions for a replacement source or target. */
export interface ReplacementOptions {
  delimiter?: string;
  index?: number;
  /** Targets only: create missing fields along the path. */
  create?: boolean;
}

/** Which resources a replacement source or target names; empty fields match anything. */
export interface ReplacementSelector {
  group?: string;
  version?: string;
  kind?: string;
  name?: string;
  namespace?: string;
  labelSelector?: string;
  annotationSelector?: string;
}

/** Where a replacement's value comes from. */
export interface ReplacementSource extends ReplacementSelector {
  /** Dotted path; defaults to `metadata.name`. */
  fieldPath?: string;
  options?: ReplacementOptions;
}

/** Where a replacement's value goes. */
export interface ReplacementTarget {
  select?: ReplacementSelector;
  reject?: ReplacementSelector[];
  /** Dotted paths with `[key=regex]`, index and `*` parts; default `metadata.name`. */
  fieldPaths?: string[];
  options?: ReplacementOptions;
}

/** One entry of a kustomization's `replacements`. */
export interface Replacement {
  source?: ReplacementSource;
  targets?: ReplacementTarget[];
}

const DEFAULT_FIELD_PATH = 'metadata.name';

/** Copies values from one field of one resource into fields of others (kustomize's ReplacementTransformer). */
export function applyReplacements(resources: Resource[], replacements: Replacement[]): void {
  for (const replacement of replacements) {
    if (!replacement.source || !replacement.targets) {
      throw new KustomizeError('replacements must specify a source and at least one target');
    }
    const value = sourceValue(resources, replacement.source);
    for (const target of replacement.targets) applyTarget(resources, value, target);
  }
}

function idsOf(resource: Resource): ResId[] {
  return [idOf(resource.object), ...resource.previousIds];
}

/** kustomize's ResId.IsSelectedBy: exact name, effective namespace, and group/version/kind. */
function isSelectedBy(id: ResId, selector: ReplacementSelector): boolean {
  if (selector.name && selector.name !== id.name) return false;
  if (selector.namespace) {
    const selectorId: ResId = {
      group: selector.group ?? '',
      version: selector.version ?? '',
      kind: selector.kind ?? '',
      name: selector.name ?? '',
      namespace: selector.namespace,
    };
    if (effectiveNamespace(selectorId) !== effectiveNamespace(id)) return false;
  }
  return isSelected(id, selector);
}

function describeSelector(selector: ReplacementSelector): string {
  const parts = (['group', 'version', 'kind', 'name', 'namespace'] as const)
    .filter((k) => selector[k])
    .map((k) => `${k}=${selector[k]}`);
  return parts.length === 0 ? '(everything)' : parts.join(', ');
}

function sourceValue(resources: Resource[], source: ReplacementSource): JsonValue {
  const matches = resources.filter((r) => idsOf(r).some((id) => isSelectedBy(id, source)));
  if (matches.length > 1)
    throw new KustomizeError(`multiple matches for selector ${describeSelector(source)}`);
  const match = matches[0];
  if (match === undefined) throw new KustomizeError(`nothing selected by ${describeSelector(source)}`);
  const fieldPath = source.fieldPath || DEFAULT_FIELD_PATH;
  const found = lookup(match.object, splitReplacementPath(fieldPath));
  if (isNilOrEmpty(found)) {
    throw new KustomizeError(
      `fieldPath \`${fieldPath}\` is missing for replacement source ${describeSelector(source)}`,
    );
  }
  const value = found as JsonValue;
  const options = source.options;
  if (!options?.delimiter) return value;
  if (!isScalar(value)) throw new KustomizeError('delimiter option can only be used with scalar nodes');
  const parts = scalarText(value).split(options.delimiter);
  const index = options.index ?? 0;
  if (index >= parts.length || index < 0) {
    throw new KustomizeError(`options.index ${index} is out of bounds for value ${scalarText(value)}`);
  }
  return parts[index] ?? '';
}

function isNilOrEmpty(value: JsonValue | undefined): boolean {
  if (value === undefined || value === null) return true;
  if (Array.isArray(value)) return value.length === 0;
  return isObject(value) && Object.keys(value).length === 0;
}

function isScalar(value: JsonValue): value is string | number | boolean | null {
  return value === null || typeof value !== 'object';
}

function scalarText(value: JsonValue): string {
  return value === null ? '' : String(value);
}

function labelsMatch(resource: Resource, selector: ReplacementSelector): boolean {
  const metadata = objectAt(resource.object, 'metadata');
  return (
    matchesSelector(parseSelector(selector.labelSelector ?? ''), stringMap(metadata?.labels)) &&
    matchesSelector(parseSelector(selector.annotationSelector ?? ''), stringMap(metadata?.annotations))
  );
}

function stringMap(value: JsonValue | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!isObject(value)) return out;
  for (const [k, v] of Object.entries(value)) out[k] = typeof v === 'string' ? v : JSON.stringify(v);
  return out;
}

function applyTarget(resources: Resource[], value: JsonValue, target: ReplacementTarget): void {
  const select = target.select;
  if (select === undefined) throw new KustomizeError('target must specify resources to select');
  const fieldPaths =
    target.fieldPaths && target.fieldPaths.length > 0 ? target.fieldPaths : [DEFAULT_FIELD_PATH];
  const rejects = target.reject ?? [];
  const selectMatcher = idMatcher(select);
  const rejectMatchers = rejects.filter(hasResId).map(idMatcher);
  for (const resource of resources) {
    if (!labelsMatch(resource, select)) continue;
    const rejectedByLabels = rejects.some(
      (r) => (r.labelSelector || r.annotationSelector) && labelsMatch(resource, r),
    );
    if (rejectedByLabels) continue;
    const ids = idsOf(resource);
    // A reject matching any identity the resource ever had rules it out.
    if (rejectMatchers.some((r) => ids.some(r))) continue;
    const hit = ids.some(selectMatcher);
    if (hit) copyToTarget(resource.object, value, fieldPaths, target.options);
  }
}

/**
 * kustomize's TargetSelectorRegex: a target's select and reject fields are anchored regular
 * expressions over group, version, kind, name and the namespace as written (empty matches anything).
 */
function idMatcher(selector: ReplacementSelector): (id: ResId) => boolean {
  const fields = ['group', 'version', 'kind', 'name', 'namespace'] as const;
  const tests = fields.flatMap((field) => {
    const pattern = selector[field];
    if (!pattern) return [];
    let re: RegExp;
    try {
      re = new RegExp(`^(?:${pattern})$`);
    } catch {
      throw new KustomizeError(
        `error creating target selector: error parsing regexp: invalid ${field} ${JSON.stringify(pattern)}`,
      );
    }
    return [(id: ResId) => re.test(id[field])];
  });
  return (id) => tests.every((t) => t(id));
}

function hasResId(selector: ReplacementSelector): boolean {
  return Boolean(selector.group || selector.version || selector.kind || selector.name || selector.namespace);
}

interface Spot {
  get(): JsonValue;
  set(value: JsonValue): void;
  /** Made by `create`: takes the value as it is, with no type of its own to keep. */
  created: boolean;
}

function copyToTarget(
  object: JsonObject,
  value: JsonValue,
  fieldPaths: string[],
  options: ReplacementOptions | undefined,
): void {
  const create = options?.create === true;
  for (const fieldPath of fieldPaths) {
    const root: Spot = {
      get: () => object,
      set: () => {
        throw new KustomizeError('a replacement cannot replace a whole resource');
      },
      created: false,
    };
    // One leading dot is allowed (`.metadata.name`); an empty part anywhere else finds nothing.
    const path = splitReplacementPath(fieldPath.startsWith('.') ? fieldPath.slice(1) : fieldPath);
    const spots = match(root, path, 0, create, value);
    if (spots.length === 0) {
      throw new KustomizeError(
        create
          ? `unable to find or create field "${fieldPath}" in replacement target`
          : `unable to find field "${fieldPath}" in replacement target`,
      );
    }
    for (const spot of spots) setSpot(spot, value, options);
  }
}

function setSpot(spot: Spot, value: JsonValue, options: ReplacementOptions | undefined): void {
  let next = structuredClone(value);
  const current = spot.get();
  if (options?.delimiter) {
    if (!isScalar(current)) throw new KustomizeError('delimiter option can only be used with scalar nodes');
    const parts = scalarText(current).split(options.delimiter);
    const text = scalarText(value);
    const index = options.index ?? 0;
    if (index < 0) parts.unshift(text);
    else if (index >= parts.length) parts.push(text);
    else parts[index] = text;
    next = parts.join(options.delimiter);
  }
  if (!isScalar(current)) {
    spot.set(next);
    return;
  }
  // kustomize copies only the text into a scalar target and keeps the target's YAML tag; a field it
  // just created has no tag, so the text is read afresh as a plain scalar.
  const text = isScalar(next) ? scalarText(next) : '';
  if (spot.created) spot.set(isScalar(next) ? resolvePlain(text) : next);
  else spot.set(retype(text, current));
}

const NULLS = new Set(['', '~', 'null', 'Null', 'NULL']);
const TRUES = new Set(['true', 'True', 'TRUE']);
const FALSES = new Set(['false', 'False', 'FALSE']);

/** Reads text the way yaml.v3 resolves an untagged plain scalar. */
function resolvePlain(text: string): JsonValue {
  if (NULLS.has(text)) return null;
  if (TRUES.has(text)) return true;
  if (FALSES.has(text)) return false;
  if (/^[-+.0-9]/.test(text)) return resolveGoNumber(text);
  return text;
}

function retype(text: string, like: string | number | boolean | null): JsonValue {
  if (typeof like === 'string') return text;
  const resolved = resolvePlain(text);
  const fits =
    typeof like === 'number'
      ? typeof resolved === 'number' && (!Number.isInteger(like) || Number.isInteger(resolved))
      : typeof like === 'boolean'
        ? typeof resolved === 'boolean'
        : false;
  if (!fits) {
    const kind = like === null ? 'null' : typeof like;
    throw new KustomizeError(`a replacement cannot write '${text}' into a ${kind} field`);
  }
  return resolved;
}

/** Splits a dotted replacement path, keeping `[key=value]` parts whole and honouring `\.`. */
export function splitReplacementPath(path: string): string[] {
  const raw = path.split('.');
  const escaped: string[] = [raw[0] ?? ''];
  for (const part of raw.slice(1)) {
    const last = escaped.length - 1;
    const prev = escaped[last] ?? '';
    if (prev.endsWith('\\')) escaped[last] = `${prev.slice(0, -1)}.${part}`;
    else escaped.push(part);
  }
  const joined: string[] = [];
  for (let i = 0; i < escaped.length; i++) {
    let part = escaped[i] ?? '';
    if (part.startsWith('[') && !part.endsWith(']')) {
      while (i < escaped.length - 1) {
        i++;
        part = `${part}.${escaped[i] ?? ''}`;
        if ((escaped[i] ?? '').endsWith(']')) break;
      }
    }
    joined.push(part);
  }
  return joined.map((p) => (p.startsWith('[') && p.endsWith(']') && !p.includes('=') ? p.slice(1, -1) : p));
}

const isListPart = (part: string): boolean => part.startsWith('[') && part.endsWith(']');
const isIndexPart = (part: string): boolean => /^\+?\d+$/.test(part);

function splitListPart(part: string): { field: string; value: string } {
  const inner = part.slice(1, -1);
  const eq = inner.indexOf('=');
  if (eq < 0) throw new KustomizeError(`list path part '${part}' must look like [field=value]`);
  return { field: inner.slice(0, eq), value: inner.slice(eq + 1) };
}

/** kyaml's PathGetter, as the source lookup uses it: exact `[key=value]` matches, no wildcards. */
export function lookup(object: JsonValue, path: string[]): JsonValue | undefined {
  let current: JsonValue | undefined = object;
  for (const raw of path) {
    // PathGetter's cleanPath: parts are trimmed and empty ones skipped (`.metadata.name` works).
    const part = raw.trim();
    if (part === '') continue;
    if (current === undefined || current === null) return undefined;
    if (isListPart(part)) {
      if (!Array.isArray(current)) return undefined;
      const { field, value } = splitListPart(part);
      current = current.find((el) =>
        field === ''
          ? isScalar(el) && scalarText(el) === value
          : isObject(el) && scalarOf(el[field]) === value,
      );
    } else if (isIndexPart(part) && Array.isArray(current)) {
      current = current[Number(part)];
    } else if (isObject(current)) {
      current = Object.hasOwn(current, part) ? current[part] : undefined;
    } else return undefined;
  }
  return current;
}

function scalarOf(value: JsonValue | undefined): string | undefined {
  if (value === undefined || (value !== null && typeof value === 'object')) return undefined;
  return scalarText(value);
}

function emptyFor(next: string | undefined, value: JsonValue): JsonValue {
  if (next === undefined) return isScalar(value) ? '' : Array.isArray(value) ? [] : {};
  return isListPart(next) || isIndexPart(next) ? [] : {};
}

/** kyaml's PathMatcher, as targets use it: `[key=regex]` (unanchored), indexes, `*`, optional create. */
function match(spot: Spot, path: string[], i: number, create: boolean, value: JsonValue): Spot[] {
  if (i === path.length) return [spot];
  const part = path[i] ?? '';
  // kyaml's PathMatcher finds no field named '' (`data..key`, `data.key.`), and kustomize fails.
  if (part === '') return [];
  const next = path[i + 1];
  const current = spot.get();
  if (isIndexPart(part)) {
    if (!Array.isArray(current)) throw new KustomizeError(`path part '${part}' needs a list`);
    const index = Number(part);
    if (current.length === index && create) current.push(emptyFor(next, value));
    if (current.length < index + 1) {
      throw new KustomizeError(`index ${index} specified but only ${current.length} elements found`);
    }
    return match(
      elementSpot(current, index, create && current.length === index + 1),
      path,
      i + 1,
      create,
      value,
    );
  }
  if (isListPart(part)) {
    if (!Array.isArray(current)) throw new KustomizeError(`path part '${part}' needs a list`);
    const { field, value: pattern } = splitListPart(part);
    let regex: RegExp;
    try {
      regex = new RegExp(pattern);
    } catch {
      throw new KustomizeError(`path part '${part}' holds an invalid regular expression`);
    }
    const found = (): Spot[] =>
      current.flatMap((el, index) => {
        if (field === '') {
          return isScalar(el) && regex.test(scalarText(el).trim())
            ? [elementSpot(current, index, false)]
            : [];
        }
        if (!isObject(el)) return [];
        const text = scalarOf(el[field]);
        if (text === undefined || el[field] === null || !regex.test(text.trim())) return [];
        return match(elementSpot(current, index, false), path, i + 1, create, value);
      });
    const spots = found();
    if (spots.length > 0 || !create) return spots;
    current.push(field === '' ? pattern : { [field]: pattern });
    return found();
  }
  if (part === '*') {
    if (!Array.isArray(current)) throw new KustomizeError("path part '*' needs a list");
    return current.flatMap((_, index) =>
      match(elementSpot(current, index, false), path, i + 1, create, value),
    );
  }
  if (!isObject(current)) {
    if (create) throw new KustomizeError(`cannot create field '${part}' inside a non-map`);
    return [];
  }
  let made = false;
  if (!Object.hasOwn(current, part)) {
    if (!create) return [];
    current[part] = emptyFor(next, value);
    made = next === undefined;
  }
  return match(
    { get: () => current[part] ?? null, set: (v) => (current[part] = v), created: made },
    path,
    i + 1,
    create,
    value,
  );
}

function elementSpot(list: JsonValue[], index: number, created: boolean): Spot {
  return {
    get: () => list[index] ?? null,
    set: (v) => {
      list[index] = v;
    },
    created,
  };
}
