import { readFileSync } from 'node:fs';
import type { JsonObject, JsonValue } from '../resource.ts';

/** How the elements of a list merge, as kyaml reads it from `x-kubernetes-patch-*`. */
export interface ListMergeInfo {
  /** x-kubernetes-patch-strategy, e.g. 'merge' or 'merge,retainKeys'. */
  strategy?: string;
  /** x-kubernetes-patch-merge-key. */
  mergeKey?: string;
  /** The keys kyaml matches elements by: x-kubernetes-list-map-keys when present, else [mergeKey], else []. */
  mergeKeys?: string[];
}

/** The part of an OpenAPI schema strategic merge needs, navigable field by field. */
export interface PatchSchema {
  /** Schema of a map field (a declared property, or the value schema of a string-keyed map). */
  field(name: string): PatchSchema | undefined;
  /** Schema of the elements when this schema is an array. */
  items(): PatchSchema | undefined;
  /** Merge metadata when this schema is a list with a patch strategy. */
  list(): ListMergeInfo | undefined;
}

/** A kustomization's `openapi:` document (kustomize's format: swagger-style `definitions`). */
export type OpenApiDocument = JsonObject;

interface FieldEntry {
  ref?: string;
  of?: 'array' | 'map';
  strategy?: string;
  key?: string;
  keys?: string[];
}

interface MergeKeyTable {
  kinds: Record<string, string>;
  definitions: Record<string, Record<string, FieldEntry>>;
}

let table: MergeKeyTable | undefined;

// Read lazily (not imported) so the type checker never has to infer a type for 170 KB of JSON.
function builtinTable(): MergeKeyTable {
  table ??= JSON.parse(readFileSync(new URL('./merge-keys.json', import.meta.url), 'utf8')) as MergeKeyTable;
  return table;
}

function listInfo(strategy: string | undefined, key: string | undefined, keys: string[] | undefined) {
  if (strategy === undefined) return undefined;
  const mergeKeys = keys ?? (key !== undefined ? [key] : []);
  const info: ListMergeInfo = { strategy, mergeKeys };
  if (key !== undefined) info.mergeKey = key;
  return info;
}

/** A definition of the built-in table. */
class DefinitionSchema implements PatchSchema {
  readonly name: string;
  constructor(name: string) {
    this.name = name;
  }
  field(name: string): PatchSchema | undefined {
    const entry = builtinTable().definitions[this.name]?.[name];
    return entry ? new FieldSchema(entry) : undefined;
  }
  items(): PatchSchema | undefined {
    return undefined;
  }
  list(): ListMergeInfo | undefined {
    return undefined;
  }
}

/** A property of a built-in definition: a ref, a list of refs, a map of refs or a primitive list. */
class FieldSchema implements PatchSchema {
  readonly entry: FieldEntry;
  constructor(entry: FieldEntry) {
    this.entry = entry;
  }
  field(name: string): PatchSchema | undefined {
    const { ref, of } = this.entry;
    if (ref === undefined || of === 'array') return undefined;
    return of === 'map' ? new DefinitionSchema(ref) : new DefinitionSchema(ref).field(name);
  }
  items(): PatchSchema | undefined {
    const { ref, of } = this.entry;
    return ref !== undefined && of === 'array' ? new DefinitionSchema(ref) : undefined;
  }
  list(): ListMergeInfo | undefined {
    return listInfo(this.entry.strategy, this.entry.key, this.entry.keys);
  }
}

function asObject(value: JsonValue | undefined): JsonObject | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? value : undefined;
}

// Documents kyaml holds together with its builtin schema: a base or component set the custom schema
// after the build had checked a namespace scope, so kyaml parsed the builtin one too, over it.
const withBuiltin = new WeakSet<OpenApiDocument>();

/** Marks a custom document as overlaid by the builtin schema (builtin definitions and kinds win). */
export function overlayBuiltinSchema(document: OpenApiDocument): void {
  withBuiltin.add(document);
}

const DEFINITION_REF = '#/definitions/';

/** A schema inside a user's `openapi:` document; `$ref`s resolve against that document. */
class DocumentSchema implements PatchSchema {
  readonly schema: JsonObject;
  readonly document: OpenApiDocument;
  constructor(schema: JsonObject, document: OpenApiDocument) {
    this.schema = schema;
    this.document = document;
  }
  static resolve(schema: JsonValue | undefined, document: OpenApiDocument): PatchSchema | undefined {
    let current = asObject(schema);
    // Follow chains of refs as kyaml does; the depth bound stops a self-referencing document.
    for (let depth = 0; current && typeof current.$ref === 'string'; depth++) {
      if (depth > 32) return undefined;
      const ref = current.$ref;
      if (withBuiltin.has(document) && ref.startsWith(DEFINITION_REF)) {
        const name = ref.slice(DEFINITION_REF.length);
        if (Object.hasOwn(builtinTable().definitions, name)) return new DefinitionSchema(name);
      }
      current = resolvePointer(document, ref);
    }
    return current ? new DocumentSchema(current, document) : undefined;
  }
  field(name: string): PatchSchema | undefined {
    const properties = asObject(this.schema.properties);
    if (properties && Object.hasOwn(properties, name))
      return DocumentSchema.resolve(properties[name], this.document);
    const additional = asObject(this.schema.additionalProperties);
    return additional ? DocumentSchema.resolve(additional, this.document) : undefined;
  }
  items(): PatchSchema | undefined {
    const type = this.schema.type;
    const isArray = type === 'array' || (Array.isArray(type) && type.length === 1 && type[0] === 'array');
    return isArray ? DocumentSchema.resolve(this.schema.items, this.document) : undefined;
  }
  list(): ListMergeInfo | undefined {
    const strategy = this.schema['x-kubernetes-patch-strategy'];
    const key = this.schema['x-kubernetes-patch-merge-key'];
    const keys = this.schema['x-kubernetes-list-map-keys'];
    return listInfo(
      typeof strategy === 'string' ? strategy : undefined,
      typeof key === 'string' ? key : undefined,
      Array.isArray(keys) ? keys.map(String) : undefined,
    );
  }
}

function resolvePointer(document: OpenApiDocument, ref: string): JsonObject | undefined {
  if (!ref.startsWith('#/')) return undefined;
  let current: JsonValue | undefined = document;
  for (const raw of ref.slice(2).split('/')) {
    const token = decodeURIComponent(raw).replaceAll('~1', '/').replaceAll('~0', '~');
    const object = asObject(current);
    current = object && Object.hasOwn(object, token) ? object[token] : undefined;
  }
  return asObject(current);
}

const documentKinds = new WeakMap<OpenApiDocument, Map<string, JsonObject>>();

function kindsOf(document: OpenApiDocument): Map<string, JsonObject> {
  let kinds = documentKinds.get(document);
  if (kinds) return kinds;
  kinds = new Map();
  for (const definition of Object.values(asObject(document.definitions) ?? {})) {
    const schema = asObject(definition);
    const gvks = schema?.['x-kubernetes-group-version-kind'];
    if (!schema || !Array.isArray(gvks)) continue;
    for (const gvk of gvks.map(asObject)) {
      if (!gvk || typeof gvk.kind !== 'string' || typeof gvk.version !== 'string') continue;
      const group = typeof gvk.group === 'string' && gvk.group !== '' ? `${gvk.group}/` : '';
      kinds.set(`${group}${gvk.version}/${gvk.kind}`, schema);
    }
  }
  documentKinds.set(document, kinds);
  return kinds;
}

/**
 * Finds the patch schema of a kind: in the user's `openapi:` document when one is given (kustomize then
 * uses it instead of the built-in Kubernetes schema), else in the built-in table; undefined when unknown.
 */
export function schemaFor(
  apiVersion: string,
  kind: string,
  extra?: OpenApiDocument,
): PatchSchema | undefined {
  const key = `${apiVersion}/${kind}`;
  if (extra) {
    const builtin = withBuiltin.has(extra) ? builtinTable().kinds[key] : undefined;
    if (builtin !== undefined) return new DefinitionSchema(builtin);
    const schema = kindsOf(extra).get(key);
    return schema ? new DocumentSchema(schema, extra) : undefined;
  }
  const name = builtinTable().kinds[key];
  return name === undefined ? undefined : new DefinitionSchema(name);
}
