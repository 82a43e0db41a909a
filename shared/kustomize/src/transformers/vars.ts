// kustomize's deprecated `vars:` (api/internal/accumulator: MergeVars, ResolveVars, refvar filter):
// a var names a field of one resource; `$(NAME)` in the varReference fields is replaced by its value.
import { KustomizeError } from '../errors.ts';
import { allIds, effectiveNamespace, formatId, idOf, isObject } from '../res-id.ts';
import type { JsonValue, ResId, Resource } from '../resource.ts';
import { type FieldRef, type FieldSpec, walkFieldSpec } from './field-specs.ts';
import { lookup, splitReplacementPath } from './replacements.ts';

/** One `vars:` entry, defaulted (fieldPath metadata.name, apiVersion split into group/version). */
export interface Var {
  name: string;
  objref: { group: string; version: string; kind: string; name: string; namespace: string };
  fieldPath: string;
}

/** How kustomize prints a var in messages: `{NAME Kind.version.group {fieldPath}}`. */
export function formatVar(v: Var): string {
  const { group, version, kind } = v.objref;
  return `{${v.name} ${kind || '[noKind]'}.${version || '[noVer]'}.${group || '[noGrp]'} {${v.fieldPath}}}`;
}

/** kustomize's VarSet.Merge: a second var of the same name is an error, whatever it points at. */
export function mergeVarSet(set: Map<string, Var>, incoming: Iterable<Var>): void {
  for (const v of incoming) {
    if (set.has(v.name)) throw new KustomizeError(`var '${v.name}' already encountered`);
    set.set(v.name, v);
  }
}

/** kustomize's ResId.EffectiveNamespace for an objref: never cluster-scoped, as its Gvk has no scope. */
const refNamespace = (ns: string): string => (ns === '' || ns === 'default' ? 'default' : ns);

/**
 * kustomize's ResAccumulator.MergeVars: marks the one resource each var names (by any of its ids:
 * group/version/kind/name, and the namespace when the objref gives one), then adds the vars.
 */
export function mergeVars(resources: Resource[], set: Map<string, Var>, incoming: Var[]): void {
  for (const v of incoming) {
    const ref = v.objref;
    const matches = (id: ResId): boolean =>
      id.name === ref.name &&
      id.group === ref.group &&
      id.version === ref.version &&
      id.kind === ref.kind &&
      (ref.namespace === '' || effectiveNamespace(id) === refNamespace(ref.namespace));
    const matched = resources.filter((r) => allIds(r).some(matches));
    if (matched.length > 1) {
      throw new KustomizeError(
        `merging vars: found ${matched.length} resId matches for var ${formatVar(v)} (unable to disambiguate)`,
      );
    }
    const [only] = matched;
    if (only !== undefined) only.refVarNames = [...(only.refVarNames ?? []), v.name];
  }
  try {
    mergeVarSet(set, incoming);
  } catch (error) {
    throw new KustomizeError(`merging vars: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/**
 * kyaml's GetFieldValue: the path split as replacements split theirs (`[a.b/c]` is one map key,
 * `[name=x]` a list element when it is a part of its own), then `ports[0]` split into `ports`, `0`.
 */
function fieldValue(object: JsonValue, path: string): JsonValue | undefined {
  const parts: string[] = [];
  for (const part of splitReplacementPath(path)) {
    const m = /^(.*)\[(\d+)\]$/.exec(part);
    if (m === null) parts.push(part);
    else {
      if (m[1] !== '') parts.push(m[1] as string);
      parts.push(m[2] as string);
    }
  }
  return lookup(object, parts);
}

const isPrimitive = (v: JsonValue): v is string | number | boolean =>
  typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';

/** kustomize's refvar DoReplacements: `$(NAME)` expands, `$$` is a literal `$`, unknown names stay. */
export function expandVars(
  input: string,
  lookup: (name: string) => JsonValue | undefined,
  /** How much longer than the input the result may grow; past it the expansion stops with `undefined`. */
  maxGrowth = Number.POSITIVE_INFINITY,
): JsonValue | undefined {
  let out = '';
  let checkpoint = 0;
  for (let cursor = 0; cursor < input.length; cursor++) {
    if (input[cursor] !== '$' || cursor + 1 >= input.length) continue;
    out += input.slice(checkpoint, cursor);
    const rest = input.slice(cursor + 1);
    let read: string;
    let advance = 1;
    if (rest[0] === '$') read = '$';
    else if (rest[0] === '(') {
      const close = rest.indexOf(')', 1);
      if (close < 0) read = '$(';
      else {
        const name = rest.slice(1, close);
        advance = close + 1;
        const value = lookup(name);
        const mapped = value !== undefined && isPrimitive(value) ? value : `$(${name})`;
        // A string that is exactly one reference takes the value with its type.
        if (input === `$(${name})`) return mapped;
        read = String(mapped);
      }
    } else read = `$${rest[0]}`;
    out += read;
    if (out.length - cursor > maxGrowth) return undefined;
    cursor += advance;
    checkpoint = cursor + 1;
  }
  return out + input.slice(checkpoint);
}

/** kustomize's ResolveVars: each var's value from the resource it marked, then substituted everywhere. */
export function resolveVars(
  resources: Resource[],
  set: Map<string, Var>,
  varReference: FieldSpec[],
  /** Characters substitution may add in all: `$(BIG)` repeated can amplify a build without bound. */
  maxBytes = Number.POSITIVE_INFINITY,
): void {
  if (set.size === 0) return;
  const values = new Map<string, JsonValue>();
  for (const v of [...set.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    const holder = resources.find((r) => r.refVarNames?.includes(v.name));
    if (holder === undefined) {
      throw new KustomizeError(
        `var '${formatVar(v)}' cannot be mapped to a field in the set of known resources`,
      );
    }
    const value = fieldValue(holder.object, v.fieldPath);
    if (value === undefined) {
      throw new KustomizeError(
        `field specified in var '${formatVar(v)}' not found in corresponding resource`,
      );
    }
    // kyaml hands a null node's text over: '' for an empty value (`key:`), which is what this model keeps.
    values.set(v.name, value === null ? '' : value);
  }
  let written = 0;
  const expand = (text: string): JsonValue => {
    const out = expandVars(text, (name) => values.get(name), maxBytes - written);
    if (typeof out === 'string') written += Math.max(0, out.length - text.length);
    if (out === undefined || written > maxBytes) {
      throw new KustomizeError(`vars expand the build by more than ${maxBytes} characters`);
    }
    return out;
  };
  for (const resource of resources) {
    for (const spec of varReference) {
      try {
        walkFieldSpec(resource.object, spec, (ref) => substitute(ref, expand));
      } catch (error) {
        if (!(error instanceof KustomizeError)) throw error;
        throw new KustomizeError(`${formatId(idOf(resource.object))}: ${error.message}`);
      }
    }
  }
}

function substitute(ref: FieldRef, expand: (text: string) => JsonValue): void {
  const value = ref.value;
  if (value === null) return;
  if (typeof value === 'string') {
    ref.set(expand(value));
  } else if (Array.isArray(value)) {
    value.forEach((item, i) => {
      if (typeof item !== 'string') throw new KustomizeError('invalid value type expect a string');
      value[i] = expand(item);
    });
  } else if (isObject(value)) {
    for (const [key, item] of Object.entries(value)) {
      if (typeof item === 'string') value[key] = expand(item);
    }
  }
}
