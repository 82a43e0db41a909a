// Writes shared/kustomize/src/smp/merge-keys.json: the strategic-merge metadata of the Kubernetes
// OpenAPI v2 document (k8s.io/kubernetes v1.36.3, from the Go module cache), trimmed to what SMP needs.
// Usage: node --import tsx hack/gen-merge-keys.ts [--check] [--swagger <path>]
// --check writes nothing and exits 1 when the committed table differs from a fresh one.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

export const KUBERNETES_VERSION = 'v1.36.3';
export const TABLE_PATH = fileURLToPath(
  new URL('../shared/kustomize/src/smp/merge-keys.json', import.meta.url),
);
const REPO_ROOT = fileURLToPath(new URL('../', import.meta.url));

/** One field of a definition: where it leads and how lists under it merge. */
export interface FieldEntry {
  /** Definition the field (or its items/values) refers to. */
  ref?: string;
  /** 'array' when `ref` describes the items, 'map' when it describes the values of a string-keyed map. */
  of?: 'array' | 'map';
  /** x-kubernetes-patch-strategy, e.g. 'merge' or 'merge,retainKeys'. */
  strategy?: string;
  /** x-kubernetes-patch-merge-key. */
  key?: string;
  /** x-kubernetes-list-map-keys; kyaml prefers these over `key` when a strategy is set. */
  keys?: string[];
}

/** The committed table: `apiVersion/kind` → definition, and definition → field → entry. */
export interface MergeKeyTable {
  source: string;
  kinds: Record<string, string>;
  definitions: Record<string, Record<string, FieldEntry>>;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonMap = { [key: string]: Json };

function isMap(value: Json | undefined): value is JsonMap {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Finds swagger.json in the Go module cache (or at an explicit path). */
export function swaggerPath(explicit?: string): string {
  if (explicit) return explicit;
  let cache = process.env.GOMODCACHE;
  if (!cache) {
    try {
      cache = execFileSync('go', ['env', 'GOMODCACHE'], { encoding: 'utf8' }).trim();
    } catch {
      cache = join(homedir(), 'go', 'pkg', 'mod');
    }
  }
  return join(cache, `k8s.io/kubernetes@${KUBERNETES_VERSION}`, 'api/openapi-spec/swagger.json');
}

function refName(schema: Json | undefined): string | undefined {
  if (!isMap(schema)) return undefined;
  const ref = schema.$ref;
  if (typeof ref === 'string') return ref.replace(/^#\/definitions\//, '');
  // Newer documents wrap a ref in allOf to attach a default; treat a single-ref allOf as the ref.
  const allOf = schema.allOf;
  if (Array.isArray(allOf) && allOf.length === 1) return refName(allOf[0]);
  return undefined;
}

function fieldEntry(property: JsonMap): FieldEntry | undefined {
  const entry: FieldEntry = {};
  const direct = refName(property);
  if (direct) entry.ref = direct;
  else if (property.type === 'array') {
    const items = refName(property.items);
    if (items) Object.assign(entry, { ref: items, of: 'array' });
  } else if (isMap(property.additionalProperties)) {
    const values = refName(property.additionalProperties);
    if (values) Object.assign(entry, { ref: values, of: 'map' });
  }
  const strategy = property['x-kubernetes-patch-strategy'];
  if (typeof strategy === 'string') {
    entry.strategy = strategy;
    const key = property['x-kubernetes-patch-merge-key'];
    if (typeof key === 'string') entry.key = key;
    const keys = property['x-kubernetes-list-map-keys'];
    if (Array.isArray(keys) && keys.every((k) => typeof k === 'string')) entry.keys = keys as string[];
  }
  return Object.keys(entry).length > 0 ? entry : undefined;
}

function sortedRecord<T>(entries: [string, T][]): Record<string, T> {
  entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(entries);
}

/** Builds the table from a parsed swagger document. */
export function buildTable(swagger: JsonMap): MergeKeyTable {
  const definitions = isMap(swagger.definitions) ? swagger.definitions : {};
  const kinds: [string, string][] = [];
  const defs: [string, Record<string, FieldEntry>][] = [];
  for (const [name, definition] of Object.entries(definitions)) {
    if (!isMap(definition)) continue;
    const gvks = definition['x-kubernetes-group-version-kind'];
    if (Array.isArray(gvks)) {
      for (const gvk of gvks) {
        if (!isMap(gvk) || typeof gvk.version !== 'string' || typeof gvk.kind !== 'string') continue;
        const group = typeof gvk.group === 'string' ? gvk.group : '';
        kinds.push([`${group ? `${group}/` : ''}${gvk.version}/${gvk.kind}`, name]);
      }
    }
    const fields: [string, FieldEntry][] = [];
    for (const [field, property] of Object.entries(
      isMap(definition.properties) ? definition.properties : {},
    )) {
      const entry = isMap(property) ? fieldEntry(property) : undefined;
      if (entry) fields.push([field, entry]);
    }
    if (fields.length > 0) defs.push([name, sortedRecord(fields)]);
  }
  // Several list kinds (e.g. WatchEvent) carry every group's GVK; keep the first definition per key deterministically.
  const uniqueKinds = new Map<string, string>();
  for (const [key, name] of kinds.sort(([a, x], [b, y]) => (a + x < b + y ? -1 : a + x > b + y ? 1 : 0))) {
    if (!uniqueKinds.has(key)) uniqueKinds.set(key, name);
  }
  return {
    source: `k8s.io/kubernetes@${KUBERNETES_VERSION} api/openapi-spec/swagger.json`,
    kinds: sortedRecord([...uniqueKinds]),
    definitions: sortedRecord(defs),
  };
}

/** Renders the table as the committed text, formatted by the repository's Biome so lint stays clean. */
export function renderTable(table: MergeKeyTable): string {
  const raw = `${JSON.stringify(table)}\n`;
  const biome = join(REPO_ROOT, 'node_modules/.bin/biome');
  return execFileSync(biome, ['format', `--stdin-file-path=${TABLE_PATH}`], {
    cwd: REPO_ROOT,
    input: raw,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
}

/** Renders a fresh table from the swagger document; undefined when the document is absent. */
export function freshTable(source: string = swaggerPath()): string | undefined {
  if (!existsSync(source)) return undefined;
  return renderTable(buildTable(JSON.parse(readFileSync(source, 'utf8')) as JsonMap));
}

/** The committed table's text, or undefined when it has not been generated yet. */
export function committedTable(): string | undefined {
  return existsSync(TABLE_PATH) ? readFileSync(TABLE_PATH, 'utf8') : undefined;
}

function main(): number {
  const { values } = parseArgs({ options: { check: { type: 'boolean' }, swagger: { type: 'string' } } });
  const source = swaggerPath(values.swagger);
  const text = freshTable(source);
  if (text === undefined) {
    console.error(
      `${source} is missing: run \`cd hack/tools/kube && GOTOOLCHAIN=local go mod download k8s.io/kubernetes\`.`,
    );
    return 2;
  }
  const current = committedTable();
  if (values.check) {
    if (current === text) return 0;
    console.error(
      'shared/kustomize/src/smp/merge-keys.json is stale: run `node --import tsx hack/gen-merge-keys.ts`.',
    );
    return 1;
  }
  if (current === text) console.log('merge-keys.json is up to date');
  else {
    writeFileSync(TABLE_PATH, text);
    console.log(`wrote ${TABLE_PATH} (${text.length} bytes)`);
  }
  return 0;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exitCode = main();
