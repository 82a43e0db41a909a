// Strategic merge patch as kustomize v5 applies it: a port of kyaml's merge2 walker
// (sigs.k8s.io/kustomize/kyaml yaml/merge2 + yaml/walk, with ListIncreaseDirection=Prepend as
// api/filters/patchstrategicmerge sets it) onto plain JSON values. The list rules are ported
// step by step, odd corners included, because kustomize's output order is what conformance checks.
//
// `$retainKeys`, `$setElementOrder/<f>` and `$deleteFromPrimitiveList/<f>`: kustomize v5.8.0's kyaml
// does not know them and merges them as ordinary fields, so they reach its output. build() must match
// kustomize byte for byte, so that is the default here too. `applyServerDirectives: true` applies them
// with apimachinery's (the API server's) meaning instead and leaves no directive key behind; nothing
// in the build uses it. `$patch` is always honoured and never left in the output.

import { copyBareNulls, isBareNull } from '../bare-nulls.ts';
import { KustomizeError } from '../errors.ts';
import { copyExactInts } from '../exact-ints.ts';
import type { JsonObject, JsonValue } from '../resource.ts';
import type { OpenApiDocument, PatchSchema } from './schema.ts';
import { schemaFor } from './schema.ts';

/** Options of strategicMerge beyond the agreed signature. */
export interface StrategicMergeOptions {
  /** The kustomization's `openapi:` document; objects nested under unknown fields are looked up there by apiVersion/kind. */
  openapi?: OpenApiDocument;
  /**
   * Apply `$retainKeys`, `$setElementOrder/<list>` and `$deleteFromPrimitiveList/<list>` as the API
   * server does. Off by default: kustomize copies them into its output unapplied.
   */
  applyServerDirectives?: boolean;
}

type Node = JsonValue | undefined;

const PATCH = '$patch';
const RETAIN_KEYS = '$retainKeys';
const SET_ELEMENT_ORDER = '$setElementOrder/';
const DELETE_FROM_PRIMITIVE_LIST = '$deleteFromPrimitiveList/';

// kyaml keeps a null the original spells out (e.g. `creationTimestamp: null`) when the patch does not
// touch it; this marker carries that "keep me" flag through the walk until the field is set.
const KEEP_NULL: JsonObject = Object.freeze({}) as JsonObject;

function isMap(node: Node): node is JsonObject {
  return typeof node === 'object' && node !== null && !Array.isArray(node);
}

function isMissingOrNull(node: Node): node is null | undefined {
  return node === undefined || node === null;
}

function isEmptyMap(node: Node): boolean {
  return isMissingOrNull(node) || (isMap(node) && Object.keys(node).length === 0);
}

/** kyaml's IsNilOrEmpty on a field value: missing, null, `{}` or `[]`. */
function isNilOrEmpty(node: Node): boolean {
  return isEmptyMap(node) || (Array.isArray(node) && node.length === 0);
}

/** The text of a YAML scalar node (`Value`): what kyaml compares merge keys by. */
function scalarText(node: Node): string {
  if (node === null) return 'null';
  if (typeof node === 'string') return node;
  if (typeof node === 'number' || typeof node === 'boolean') return String(node);
  return '';
}

function kindName(node: Node): string {
  if (Array.isArray(node)) return 'a list';
  if (isMap(node)) return 'a map';
  return 'a scalar';
}

function fail(path: string[], message: string): never {
  const at = path.length > 0 ? path.join('.') : 'the resource root';
  throw new KustomizeError(`strategic merge patch failed at ${at}: ${message}.`);
}

/** Deep copy of plain JSON; several times faster than structuredClone on manifests. */
function clone(value: JsonValue): JsonValue {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    const list = value.map(clone);
    copyExactInts(value, list);
    return list;
  }
  const copy: JsonObject = {};
  for (const key of Object.keys(value)) assign(copy, key, clone(value[key]!));
  copyExactInts(value, copy);
  copyBareNulls(value, copy);
  return copy;
}

interface Walk {
  lookup: (apiVersion: string, kind: string) => PatchSchema | undefined;
  // Raw scalar for a merge-key text, so a key kyaml re-adds keeps its JSON type (80, not "80").
  raw: Map<string, JsonValue>;
  /** StrategicMergeOptions.applyServerDirectives. */
  serverDirectives: boolean;
}

function metaSchema(ctx: Walk, sources: Node[]): PatchSchema | undefined {
  for (const source of sources) {
    if (!isMap(source)) continue;
    const apiVersion = source.apiVersion;
    const kind = source.kind;
    if (isNilOrEmpty(apiVersion) || isNilOrEmpty(kind)) continue;
    const schema = ctx.lookup(scalarText(apiVersion), scalarText(kind));
    if (schema) return schema;
  }
  return undefined;
}

/** Walker.Walk: dispatch on the kind of the first non-null source. */
function walk(ctx: Walk, dest: Node, origin: Node, given: PatchSchema | undefined, path: string[]): Node {
  const schema = given ?? metaSchema(ctx, [dest, origin]);
  const first = !isMissingOrNull(dest) ? dest : origin;
  if (isMissingOrNull(first) || isMap(first)) {
    for (const source of [dest, origin]) {
      if (!isMissingOrNull(source) && !isMap(source))
        fail(path, `expected a map but the patch has ${kindName(source)}`);
    }
    return walkMap(ctx, dest, origin, schema, path);
  }
  if (Array.isArray(first)) {
    for (const source of [dest, origin]) {
      if (!isMissingOrNull(source) && !Array.isArray(source)) {
        fail(path, `expected a list but the patch has ${kindName(source)}`);
      }
    }
    const strategy = schema?.list()?.strategy ?? '';
    if (schema && strategy.split(',').includes('merge'))
      return walkAssociativeList(ctx, dest, origin, schema, path);
    // Non-associative lists are replaced by the patch's list.
    return origin !== undefined ? stripDirectives(ctx, origin) : dest;
  }
  for (const source of [dest, origin]) {
    if (!isMissingOrNull(source) && (isMap(source) || Array.isArray(source))) {
      fail(path, `expected a scalar but the patch has ${kindName(source)}`);
    }
  }
  return origin !== undefined ? origin : dest;
}

type Directive = 'merge' | 'replace' | 'delete';

function directiveOf(value: Node, path: string[]): Directive {
  const text = scalarText(value);
  if (text === 'merge' || text === 'replace' || text === 'delete') return text;
  return fail(path, `unknown patch strategy '${text}' (want replace, delete or merge)`);
}

/** determineMappingNodePatchStrategy: reads `$patch` on a map and removes it. */
function mapDirective(patch: Node, path: string[]): Directive {
  if (!isMap(patch) || !Object.hasOwn(patch, PATCH)) return 'merge';
  const directive = directiveOf(patch[PATCH], path);
  delete patch[PATCH];
  return directive;
}

/** determineSequenceNodePatchStrategy: a `{$patch: x}` element alone in its map applies to the list. */
function listDirective(patch: JsonValue[], path: string[]): Directive {
  const element = patch.find((item) => isMap(item) && Object.hasOwn(item, PATCH));
  if (!isMap(element) || Object.keys(element).length > 1) return 'merge';
  const value = element[PATCH];
  const directive = directiveOf(value, path);
  elementSetter(patch, undefined, [PATCH], [scalarText(value)], path);
  return directive;
}

/** Merger.VisitMap: decides which map survives before its fields are walked. */
function visitMap(dest: Node, origin: Node, path: string[]): Node {
  if (isMissingOrNull(dest)) {
    let directive: Directive = 'merge';
    try {
      directive = mapDirective(origin, path);
    } catch {
      // kyaml ignores a bad directive on a map it is adding.
    }
    if (directive === 'delete') return undefined;
    if (origin === undefined && dest === null) return KEEP_NULL;
    return origin;
  }
  if (origin === null) return undefined;
  const directive = mapDirective(origin, path);
  if (directive === 'delete') return undefined;
  if (directive === 'replace') return origin;
  return dest;
}

function sortedFieldNames(sources: Node[]): string[] {
  const names = new Set<string>();
  for (const source of sources) if (isMap(source)) for (const key of Object.keys(source)) names.add(key);
  // Go's sort.Strings orders by bytes; code-unit order matches it outside astral characters.
  return [...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** A map's own field; never something inherited such as `__proto__`. */
function own(map: JsonObject, name: string): Node {
  return Object.hasOwn(map, name) ? map[name] : undefined;
}

function setField(map: JsonObject, name: string, value: Node): void {
  if (value === undefined || value === null) {
    delete map[name];
    return;
  }
  assign(map, name, value === KEEP_NULL ? null : value);
}

function assign(map: JsonObject, name: string, value: JsonValue): void {
  // defineProperty, not assignment, so a '__proto__' key stays an ordinary field.
  if (name === '__proto__') {
    Object.defineProperty(map, name, { value, writable: true, enumerable: true, configurable: true });
  } else map[name] = value;
}

function takeStringList(map: JsonObject, key: string, path: string[]): JsonValue[] {
  const value = map[key];
  delete map[key];
  if (!Array.isArray(value)) fail(path, `${key} must be a list`);
  return value;
}

/** Walker.walkMap, plus the apimachinery-only directives kyaml would pass through. */
function walkMap(ctx: Walk, dest: Node, origin: Node, schema: PatchSchema | undefined, path: string[]): Node {
  // Pull the apimachinery-only directives out of the patch first so they are never walked as fields.
  let retain: string[] | undefined;
  const orders = new Map<string, JsonValue[]>();
  const deletions = new Map<string, JsonValue[]>();
  if (ctx.serverDirectives && isMap(origin)) {
    for (const key of Object.keys(origin)) {
      if (key === RETAIN_KEYS) retain = takeStringList(origin, key, path).map(scalarText);
      else if (key.startsWith(SET_ELEMENT_ORDER)) {
        orders.set(key.slice(SET_ELEMENT_ORDER.length), takeStringList(origin, key, path));
      } else if (key.startsWith(DELETE_FROM_PRIMITIVE_LIST)) {
        deletions.set(key.slice(DELETE_FROM_PRIMITIVE_LIST.length), takeStringList(origin, key, path));
      }
    }
  }
  const result = visitMap(dest, origin, path);
  if (result === undefined || !isMap(result) || result === KEEP_NULL) return result;
  for (const key of sortedFieldNames([result, origin])) {
    // merge2's VisitMap keeps a null the resource spells out that the patch leaves alone, and drops
    // a field the resource left empty (`resources:`): a null scalar with no text.
    if (isBareNull(result, key) && !(isMap(origin) && own(origin, key) !== undefined)) {
      delete result[key];
      continue;
    }
    const value = walk(
      ctx,
      own(result, key),
      isMap(origin) ? own(origin, key) : undefined,
      schema?.field(key),
      [...path, key],
    );
    setField(result, key, value);
  }
  for (const [field, values] of deletions) {
    const list = own(result, field);
    if (!Array.isArray(list)) continue;
    const drop = new Set(values.map(scalarText));
    setField(
      result,
      field,
      list.filter((item) => !drop.has(scalarText(item))),
    );
  }
  for (const [field, order] of orders) {
    const list = own(result, field);
    if (Array.isArray(list)) setField(result, field, applyElementOrder(list, order, schema?.field(field)));
  }
  if (retain) {
    const keep = new Set(retain);
    for (const key of Object.keys(result)) if (!keep.has(key)) delete result[key];
  }
  return result;
}

/** `$setElementOrder/<field>`: listed elements take the listed order within the slots they occupy. */
function applyElementOrder(
  list: JsonValue[],
  order: JsonValue[],
  schema: PatchSchema | undefined,
): JsonValue[] {
  const keys = schema?.list()?.mergeKeys ?? [];
  const identity = (item: JsonValue): string =>
    isMap(item) ? JSON.stringify(keys.map((key) => scalarText(own(item, key)))) : `=${scalarText(item)}`;
  const rank = new Map<string, number>();
  order.forEach((item, index) => {
    if (!rank.has(identity(item))) rank.set(identity(item), index);
  });
  const listed = list.filter((item) => rank.has(identity(item)));
  listed.sort((a, b) => rank.get(identity(a))! - rank.get(identity(b))!);
  let next = 0;
  return list.map((item) => (rank.has(identity(item)) ? listed[next++]! : item));
}

function isDirectiveKey(ctx: Walk, key: string): boolean {
  if (key === PATCH) return true;
  return (
    ctx.serverDirectives &&
    (key === RETAIN_KEYS || key.startsWith(SET_ELEMENT_ORDER) || key.startsWith(DELETE_FROM_PRIMITIVE_LIST))
  );
}

function markedDelete(node: JsonValue): boolean {
  return isMap(node) && Object.hasOwn(node, PATCH) && node[PATCH] === 'delete';
}

/**
 * Removes the directives kyaml leaves in its output (in lists it copies whole, or merges with
 * themselves): an element or field marked `$patch: delete` goes, as the patch meant; a directive-only
 * element and every other directive key are dropped.
 */
function stripDirectives(ctx: Walk, node: JsonValue): JsonValue {
  if (Array.isArray(node)) {
    const list = node
      .filter((item) => !markedDelete(item))
      .filter((item) => !(isMap(item) && Object.hasOwn(item, PATCH) && Object.keys(item).length === 1))
      .map((item) => stripDirectives(ctx, item));
    // Indexes still line up when nothing was dropped: keep the exact text of big integers.
    if (list.length === node.length) copyExactInts(node, list);
    return list;
  }
  if (!isMap(node)) return node;
  for (const key of Object.keys(node)) {
    if (isDirectiveKey(ctx, key) || markedDelete(node[key]!)) delete node[key];
    else assign(node, key, stripDirectives(ctx, node[key]!));
  }
  return node;
}

/** yaml.FieldMatcher{Name, StringValue}: the field's value node, or undefined when it does not match. */
function fieldMatcher(elem: Node, name: string, value: string, path: string[]): Node {
  if (isMissingOrNull(elem)) return undefined;
  if (name === '') {
    if (isMap(elem) || Array.isArray(elem))
      fail(path, 'expected a scalar list element but found a map or list');
    return scalarText(elem) === value ? elem : undefined;
  }
  if (!isMap(elem)) fail(path, `expected a map list element but found ${kindName(elem)}`);
  if (!Object.hasOwn(elem, name)) return undefined;
  // An empty StringValue means "any value" in kyaml.
  return value === '' || scalarText(elem[name]) === value ? elem[name] : undefined;
}

/** yaml.ElementSetter: replaces (or, without an element, deletes) the elements matching keys/values; appends when none match. */
function elementSetter(
  list: JsonValue[],
  element: Node,
  rawKeys: string[],
  values: string[],
  path: string[],
): void {
  const keys = rawKeys.length === 0 ? [''] : rawKeys;
  const mappingSetter = keys[0] !== '' && values.length > 0 && values[0] !== '';
  const content: JsonValue[] = [];
  let matched = false;
  for (const elem of list) {
    // kyaml drops empty elements whenever it rewrites a list.
    if (isEmptyMap(elem)) continue;
    if (!isMap(elem) && mappingSetter) {
      content.push(elem);
      continue;
    }
    let found = true;
    let val: Node;
    for (let j = 0; j < keys.length; j++) {
      if (j < values.length) val = fieldMatcher(elem, keys[j]!, values[j]!, path);
      if (val === undefined) {
        found = false;
        break;
      }
    }
    if (!found) {
      if (values.length > 0) content.push(elem);
      continue;
    }
    matched = true;
    if (element === undefined || element === null) continue;
    content.push(element);
  }
  list.splice(0, list.length, ...content);
  if (isMissingOrNull(element)) return;
  if (!matched) list.push(element);
}

/** yaml.ElementMatcher via RNode.ElementList: the first map element whose keys all equal values. */
function elementList(list: Node, rawKeys: string[], rawValues: string[]): Node {
  if (!Array.isArray(list)) return undefined;
  const keys = rawKeys.length === 0 ? [''] : rawKeys;
  const values = rawValues.length === 0 ? [''] : rawValues;
  if (keys[0] === '') return list.find((item) => scalarText(item) === values[0]);
  for (const elem of list) {
    if (!isMap(elem)) continue;
    if (keys.length !== values.length) return undefined;
    if (keys.every((key, i) => Object.hasOwn(elem, key) && scalarText(elem[key]) === values[i])) return elem;
  }
  return undefined;
}

function validateKeys(valuesList: string[][], values: string[], keys: string[]): [string[], string[]] {
  const valid = new Set<string>();
  for (const candidate of valuesList) {
    candidate.forEach((v, i) => {
      if (v !== '') valid.add(keys[i]!);
    });
  }
  if (valid.size === 0) return [keys, values];
  return [keys.filter((k) => valid.has(k)), values.filter((v, i) => v !== '' || valid.has(keys[i]!))];
}

function matchValues(a: string[], b: string[]): string[] | undefined {
  if (a.length !== b.length) return undefined;
  let common = false;
  const result: string[] = [];
  for (let i = 0; i < a.length; i++) {
    if (a[i] === b[i]) {
      common = true;
      result.push(a[i]!);
    } else if (a[i] !== '' && b[i] !== '') return undefined;
    else result.push(a[i] !== '' ? a[i]! : b[i]!);
  }
  return common ? result : undefined;
}

/** mergeValues: tuples equal but for empty entries (a port without protocol vs with TCP) are unified. */
function mergeValues(valuesList: string[][]): string[][] {
  for (let i = 0; i < valuesList.length; i++) {
    const first = valuesList[i]!;
    for (let j = 0; j < valuesList.length; j++) {
      const merged = matchValues(first, valuesList[j]!);
      if (merged) {
        valuesList[i] = merged;
        valuesList[j] = merged;
      }
    }
  }
  return valuesList;
}

/** elementValues with Prepend: the patch's keys in patch order, then the original's new ones. */
function elementValues(ctx: Walk, sources: Node[], keys: string[]): string[][] {
  const result: string[][] = [];
  const seen = new Set<string>();
  for (const source of sources) {
    if (!Array.isArray(source)) continue;
    for (const elem of source) {
      if (keys.length === 0) continue;
      const tuple = keys.map((key) => {
        const value = isMap(elem) ? own(elem, key) : undefined;
        if (isNilOrEmpty(value)) return '';
        const text = scalarText(value);
        if (!ctx.raw.has(text)) ctx.raw.set(text, value!);
        return text;
      });
      const id = JSON.stringify(tuple);
      if (seen.has(id)) continue;
      seen.add(id);
      result.push(tuple);
    }
  }
  return result;
}

function primitiveValues(sources: Node[]): string[][] {
  const result: string[][] = [];
  const seen = new Set<string>();
  for (const source of sources) {
    if (!Array.isArray(source)) continue;
    for (const item of source) {
      const text = scalarText(item);
      if (seen.has(text)) continue;
      seen.add(text);
      result.push([text]);
    }
  }
  return result;
}

/** Walker.walkAssociativeSequence with Merger.VisitList. */
function walkAssociativeList(ctx: Walk, dest: Node, origin: Node, schema: PatchSchema, path: string[]): Node {
  let list: Node;
  if (isMissingOrNull(dest)) {
    // kyaml adds such a list without reading its `$patch` element, then loses the named elements while
    // merging the list with itself (`[{$patch: replace}, {name: v}]` becomes `[{$patch: replace}]`);
    // Mooring honours the directive instead, so the list is the patch's elements.
    if (Array.isArray(origin) && listDirective(origin, path) === 'delete') return undefined;
    list = origin;
  } else if (origin === null) list = undefined;
  else {
    const directive = Array.isArray(origin) ? listDirective(origin, path) : 'merge';
    list = directive === 'delete' ? undefined : directive === 'replace' ? origin : dest;
  }
  if (list === undefined || list === null) return list === null ? undefined : list;
  if (!Array.isArray(list)) return list;
  const keys = schema.list()?.mergeKeys ?? [];
  // Prepend: the patch (origin) is read first, then the original.
  const values = elementValues(ctx, [origin, list], keys);
  if (values.length !== 0 || keys.length > 0)
    return setListElements(ctx, values, keys, list, origin, schema, path);
  return setListElements(ctx, primitiveValues([origin, list]), [''], list, origin, schema, path);
}

/** setAssociativeSequenceElements: merges element by element, then re-adds the original's elements. */
function setListElements(
  ctx: Walk,
  rawValuesList: string[][],
  keys: string[],
  dest: JsonValue[],
  origin: Node,
  schema: PatchSchema,
  path: string[],
): Node {
  const added: JsonValue[] = [];
  const itemSchema = schema.items();
  const valuesList = keys.length > 1 ? mergeValues(rawValuesList) : rawValuesList;
  let validKeys: string[] = [];
  let validValues: string[] = [];
  for (const values of valuesList) {
    if (values.length === 0) continue;
    [validKeys, validValues] = validateKeys(valuesList, values, keys);
    const [matchKeys, matchValues_] = validateKeys([validValues], validValues, validKeys);
    const val = walk(
      ctx,
      elementList(dest, matchKeys, matchValues_),
      elementList(origin, matchKeys, matchValues_),
      itemSchema,
      [...path, `[${validValues.join(',')}]`],
    );
    if (isEmptyMap(val) || val === KEEP_NULL) {
      if (validKeys.length > 0) elementSetter(dest, undefined, validKeys, validValues, path);
      continue;
    }
    if (isMap(val)) {
      validKeys.forEach((key, i) => {
        const text = validValues[i]!;
        if (!Object.hasOwn(val, key) && text !== '') setField(val, key, ctx.raw.get(text) ?? text);
      });
    }
    elementSetter(added, val, validKeys, validValues, path);
  }
  if (valuesList.length > 0 && validKeys.length > 0) appendListNode(added, dest, validKeys, path);
  return added;
}

/** appendListNode(itemsToBeAdded, dest): each original element replaces its merged twin (or is appended). */
function appendListNode(dst: JsonValue[], src: JsonValue[], keys: string[], path: string[]): void {
  for (const elem of [...src]) {
    if (keys[0] === '') {
      elementSetter(dst, elem, [''], [scalarText(elem)], path);
      continue;
    }
    const values: string[] = [];
    for (const key of keys) {
      const value = fieldMatcher(elem, key, '', path);
      // kyaml appends an element without the key straight away, then still runs the setters below.
      if (value === undefined) dst.push(elem);
      else values.push(scalarText(value));
    }
    if (keys.length > 1) elementSetter(dst, undefined, keys, values, path);
    elementSetter(dst, elem, keys, values, path);
  }
}

/**
 * Applies a strategic merge patch to a resource the way `kustomize build` does; returns null when
 * the patch deletes the whole resource (`$patch: delete`). Inputs are not modified.
 */
export function strategicMerge(
  original: JsonObject,
  patch: JsonObject,
  schema: PatchSchema | undefined,
  options: StrategicMergeOptions = {},
): JsonObject | null {
  const ctx: Walk = {
    lookup: (apiVersion, kind) => schemaFor(apiVersion, kind, options.openapi),
    raw: new Map(),
    serverDirectives: options.applyServerDirectives === true,
  };
  const dest = clone(original) as JsonObject;
  const result = walk(ctx, dest, clone(patch), schema, []);
  if (!isMap(result) || result === KEEP_NULL) return null;
  // A top-level `$patch: replace` makes kyaml return the patch node, but kustomize keeps the resource's
  // own node, which that walk never touched: the resource comes out unchanged. Matched for conformance.
  if (result !== dest) return stripDirectives(ctx, dest) as JsonObject;
  // Directive elements kyaml copies verbatim (e.g. in a list it adds whole) must not reach the output.
  return stripDirectives(ctx, result) as JsonObject;
}
