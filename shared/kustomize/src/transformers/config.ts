// kustomize's transformer configuration (api/internal/plugins/builtinconfig): the field specs every
// builtin transformer works on, the defaults merged with a kustomization's `configurations:` files.
import { KustomizeError } from '../errors.ts';
import { compareUtf8 } from '../hash.ts';
import { parseYamlDocuments } from '../load-resources.ts';
import { defaultOrderFirst, defaultOrderLast } from '../order.ts';
import type { JsonObject, JsonValue } from '../resource.ts';
import {
  COMMON_ANNOTATIONS_FIELD_SPECS,
  COMMON_LABELS_FIELD_SPECS,
  type FieldSpec,
  IMAGES_FIELD_SPECS,
  NAME_PREFIX_SUFFIX_FIELD_SPECS,
  NAMESPACE_FIELD_SPECS,
  REPLICAS_FIELD_SPECS,
  TEMPLATE_LABELS_FIELD_SPECS,
} from './field-specs.ts';
import { NAME_REFERENCE_TABLE, type NameBackReference } from './name-reference-table.ts';

/** kustomize's TransformerConfig: one field-spec list per builtin transformer. */
export interface TransformerConfig {
  namePrefix: FieldSpec[];
  nameSuffix: FieldSpec[];
  namespace: FieldSpec[];
  commonLabels: FieldSpec[];
  labels: FieldSpec[];
  templateLabels: FieldSpec[];
  commonAnnotations: FieldSpec[];
  nameReference: NameBackReference[];
  varReference: FieldSpec[];
  images: FieldSpec[];
  replicas: FieldSpec[];
}

const FS_FIELDS = [
  'namePrefix',
  'nameSuffix',
  'namespace',
  'commonLabels',
  'labels',
  'templateLabels',
  'commonAnnotations',
  'varReference',
  'images',
  'replicas',
] as const;

const workloadVarRefs = (kind: string, pod: string, volumes: string[]): FieldSpec[] => [
  ...['containers', 'initContainers'].flatMap((c) =>
    ['args', 'command', 'env/value', 'volumeMounts/mountPath'].map((f) => ({
      path: `${pod}/${c}/${f}`,
      kind,
    })),
  ),
  ...volumes.map((path) => ({ path, kind })),
];

/** kustomize v5.8.0's api/internal/konfig/builtinpluginconsts/varreference.go, as data. */
export const VAR_REFERENCE_FIELD_SPECS: FieldSpec[] = [
  // kustomize's CronJob row says `spec/jobTemplate/spec/template/volumes/nfs/server` (no `spec/`).
  ...workloadVarRefs('CronJob', 'spec/jobTemplate/spec/template/spec', [
    'spec/jobTemplate/spec/template/volumes/nfs/server',
  ]),
  ...workloadVarRefs('DaemonSet', 'spec/template/spec', ['spec/template/spec/volumes/nfs/server']),
  ...workloadVarRefs('Deployment', 'spec/template/spec', ['spec/template/spec/volumes/nfs/server']),
  { path: 'spec/template/metadata/annotations', kind: 'Deployment' },
  { path: 'spec/rules/host', kind: 'Ingress' },
  { path: 'spec/tls/hosts', kind: 'Ingress' },
  { path: 'spec/tls/secretName', kind: 'Ingress' },
  ...workloadVarRefs('Job', 'spec/template/spec', ['spec/template/spec/volumes/nfs/server']),
  ...workloadVarRefs('Pod', 'spec', ['spec/volumes/nfs/server']),
  ...workloadVarRefs('ReplicaSet', 'spec/template/spec', ['spec/template/spec/volumes/nfs/server']),
  { path: 'spec/ports/port', kind: 'Service' },
  { path: 'spec/ports/targetPort', kind: 'Service' },
  ...workloadVarRefs('StatefulSet', 'spec/template/spec', ['spec/volumeClaimTemplates/spec/nfs/server']),
  { path: 'spec/nfs/server', kind: 'PersistentVolume' },
  { path: 'metadata/labels' },
  { path: 'metadata/annotations' },
];

export function emptyConfig(): TransformerConfig {
  return {
    namePrefix: [],
    nameSuffix: [],
    namespace: [],
    commonLabels: [],
    labels: [],
    templateLabels: [],
    commonAnnotations: [],
    nameReference: [],
    varReference: [],
    images: [],
    replicas: [],
  };
}

const typeOrders = new Map<string, number>([
  ...defaultOrderFirst.map((kind, i): [string, number] => [kind, -defaultOrderFirst.length + i]),
  ...defaultOrderLast.map((kind, i): [string, number] => [kind, 1 + i]),
]);
const gvkSortString = (s: FieldSpec): string => `${s.group || '~G'}_${s.version || '~V'}_${s.kind || '~K'}`;

/**
 * kustomize's sortFields (FsSlice by Gvk.IsLessThan), which every config load and merge ends with.
 * It matters: a specific spec sorted before the generic one of the same path makes a later merge
 * drop the generic one (`namePrefix: [{path: metadata/name, kind: X}]` limits the prefix to X).
 * Go's sort is not stable, but specs it could swap have one GVK, which no merge tells apart.
 */
export function sortFieldSpecs(specs: FieldSpec[]): FieldSpec[] {
  return [...specs].sort((a, b) => {
    const ra = typeOrders.get(a.kind ?? '') ?? 0;
    const rb = typeOrders.get(b.kind ?? '') ?? 0;
    if (ra !== rb) return ra - rb;
    return compareUtf8(gvkSortString(a), gvkSortString(b));
  });
}

function sortConfig(config: TransformerConfig): TransformerConfig {
  for (const field of FS_FIELDS) config[field] = sortFieldSpecs(config[field]);
  return config;
}

let sortedDefault: TransformerConfig | undefined;

/** kustomize's MakeDefaultConfig (sorted, as it is read from its builtin YAML), built once and copied. */
export function defaultConfig(): TransformerConfig {
  sortedDefault ??= sortConfig({
    namePrefix: [...NAME_PREFIX_SUFFIX_FIELD_SPECS],
    nameSuffix: [...NAME_PREFIX_SUFFIX_FIELD_SPECS],
    namespace: [...NAMESPACE_FIELD_SPECS],
    commonLabels: [...COMMON_LABELS_FIELD_SPECS],
    labels: [],
    templateLabels: [...TEMPLATE_LABELS_FIELD_SPECS],
    commonAnnotations: [...COMMON_ANNOTATIONS_FIELD_SPECS],
    nameReference: NAME_REFERENCE_TABLE,
    varReference: [...VAR_REFERENCE_FIELD_SPECS],
    images: [...IMAGES_FIELD_SPECS],
    replicas: [...REPLICAS_FIELD_SPECS],
  });
  const copy = { ...sortedDefault };
  for (const field of FS_FIELDS) copy[field] = [...sortedDefault[field]];
  copy.nameReference = sortedDefault.nameReference.map((b) => ({
    target: b.target,
    referrers: [...b.referrers],
  }));
  return copy;
}

/**
 * kustomize's FsSlice.MergeOne: an incoming spec is dropped when a present one with its path is
 * selected by the incoming spec's group/version/kind (effectivelyEquals, which is not symmetric),
 * and is an error when their create flags differ.
 */
export function mergeOneFieldSpec(specs: FieldSpec[], x: FieldSpec): FieldSpec[] {
  const same = specs.find(
    (s) =>
      s.path === x.path &&
      (!x.group || x.group === (s.group ?? '')) &&
      (!x.version || x.version === (s.version ?? '')) &&
      (!x.kind || x.kind === (s.kind ?? '')),
  );
  if (same === undefined) return [...specs, x];
  if ((same.create ?? false) !== (x.create ?? false)) throw new KustomizeError('conflicting fieldspecs');
  return specs;
}

/** kustomize's FsSlice.MergeAll. */
export function mergeAllFieldSpecs(specs: FieldSpec[], incoming: FieldSpec[]): FieldSpec[] {
  let out = specs;
  for (const x of incoming) out = mergeOneFieldSpec(out, x);
  return out;
}

const sameGvk = (
  a: { group?: string; version?: string; kind?: string },
  b: { group?: string; version?: string; kind?: string },
): boolean =>
  (a.group ?? '') === (b.group ?? '') &&
  (a.version ?? '') === (b.version ?? '') &&
  (a.kind ?? '') === (b.kind ?? '');

function mergeNameReferences(into: NameBackReference[], incoming: NameBackReference[]): NameBackReference[] {
  let out = into;
  for (const other of incoming) {
    let found = false;
    out = out.map((c) => {
      if (!sameGvk(c.target, other.target)) return c;
      found = true;
      return { target: c.target, referrers: mergeAllFieldSpecs(c.referrers, other.referrers) };
    });
    if (!found) out = [...out, other];
  }
  return out;
}

const labelOf: Record<(typeof FS_FIELDS)[number], string> = {
  namePrefix: 'NamePrefix',
  nameSuffix: 'NameSuffix',
  namespace: 'NameSpace',
  commonLabels: 'CommonLabels',
  labels: 'Labels',
  templateLabels: 'TemplateLabels',
  commonAnnotations: 'CommonAnnotations',
  varReference: 'VarReference',
  images: 'Images',
  replicas: 'Replicas',
};

/** kustomize's TransformerConfig.Merge, sort included (the name-reference rows keep their order). */
export function mergeConfig(t: TransformerConfig, input: TransformerConfig | undefined): TransformerConfig {
  if (input === undefined) return t;
  const merged = emptyConfig();
  for (const field of FS_FIELDS) {
    try {
      merged[field] = mergeAllFieldSpecs(t[field], input[field]);
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      throw new KustomizeError(`failed to merge ${labelOf[field]} fieldSpec: ${why}`);
    }
  }
  try {
    merged.nameReference = mergeNameReferences(t.nameReference, input.nameReference);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new KustomizeError(`failed to merge NameReference fieldSpec: ${why}`);
  }
  return sortConfig(merged);
}

/**
 * Go's encoding/json matches a key to a field exactly, else case-insensitively; anything else is
 * an unknown field (kustomize decodes strictly).
 */
export function canonicalKeys(value: JsonValue, fields: readonly string[], where: string): JsonObject {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new KustomizeError(`${where}: expected a mapping`);
  }
  const out: JsonObject = {};
  for (const [key, v] of Object.entries(value)) {
    const field = fields.includes(key) ? key : fields.find((f) => f.toLowerCase() === key.toLowerCase());
    if (field === undefined) {
      throw new KustomizeError(`${where}: error unmarshaling JSON: json: unknown field "${key}"`);
    }
    if (v !== null) out[field] = v;
  }
  return out;
}

const optString = (v: JsonValue | undefined, where: string): string | undefined => {
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw new KustomizeError(`${where} must be a string`);
  return v;
};

function fieldSpecOf(value: JsonValue, where: string): FieldSpec {
  const o = canonicalKeys(value, ['group', 'version', 'kind', 'path', 'create'], where);
  const spec: FieldSpec = { path: optString(o.path, `${where}.path`) ?? '' };
  for (const k of ['group', 'version', 'kind'] as const) {
    const s = optString(o[k], `${where}.${k}`);
    if (s) spec[k] = s;
  }
  if (o.create !== undefined) {
    if (typeof o.create !== 'boolean') throw new KustomizeError(`${where}.create must be a boolean`);
    if (o.create) spec.create = true;
  }
  return spec;
}

function listOf<T>(value: JsonValue | undefined, where: string, item: (v: JsonValue, w: string) => T): T[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new KustomizeError(`${where} must be a list`);
  return value.map((v, i) => item(v, `${where}[${i}]`));
}

/** Parses one `configurations:` file the way kustomize's makeTransformerConfigFromBytes does. */
export function parseTransformerConfig(text: string, file: string): TransformerConfig {
  const [doc] = parseYamlDocuments(text, file, undefined, false, 'yaml-1.1');
  const config = emptyConfig();
  if (doc === null || doc === undefined) return config;
  const o = canonicalKeys(doc, [...FS_FIELDS, 'nameReference'], file);
  for (const field of FS_FIELDS) config[field] = listOf(o[field], `${file}: ${field}`, fieldSpecOf);
  config.nameReference = listOf(o.nameReference, `${file}: nameReference`, (v, w) => {
    const n = canonicalKeys(v, ['group', 'version', 'kind', 'fieldSpecs'], w);
    const target: NameBackReference['target'] = {};
    for (const k of ['group', 'version', 'kind'] as const) {
      const s = optString(n[k], `${w}.${k}`);
      if (s) target[k] = s;
    }
    return { target, referrers: listOf(n.fieldSpecs, `${w}.fieldSpecs`, fieldSpecOf) };
  });
  return sortConfig(config);
}

/**
 * kustomize's LoadConfigFromCRDs (`crds:`): a map of OpenAPI definitions by Go type name; each
 * that looks like a Kubernetes type (kind, apiVersion, metadata) contributes the field specs its
 * x-kubernetes-annotation, -label-selector, -identity and -object-ref-* extensions mark, following
 * `$ref`s into the map's other definitions. The kind is the type name after its last `.`.
 */
export function configFromCrds(text: string, file: string): TransformerConfig {
  const [doc] = parseYamlDocuments(text, file, undefined, false, 'yaml-1.1');
  if (doc === null || doc === undefined) return emptyConfig();
  if (typeof doc !== 'object' || Array.isArray(doc)) {
    throw new KustomizeError(`unable to parse open API definition from '${file}': not a mapping`);
  }
  const asObject = (v: JsonValue | undefined): JsonObject | undefined =>
    v !== null && v !== undefined && typeof v === 'object' && !Array.isArray(v) ? v : undefined;
  const propertiesOf = (typeName: string): JsonObject | undefined =>
    asObject(asObject(asObject(doc[typeName])?.Schema)?.properties);
  const result = emptyConfig();
  const visit = (kind: string, typeName: string, path: string[], depth: number): void => {
    const properties = propertiesOf(typeName);
    if (properties === undefined || depth > 32) return;
    for (const [prop, raw] of Object.entries(properties)) {
      const property = asObject(raw) ?? {};
      const spec = (parts: string[]): FieldSpec => ({ path: parts.join('/'), kind });
      const here = [...path, prop];
      if (typeof property['x-kubernetes-annotation'] === 'string') result.commonAnnotations.push(spec(here));
      if (typeof property['x-kubernetes-label-selector'] === 'string') result.commonLabels.push(spec(here));
      if (typeof property['x-kubernetes-identity'] === 'string') result.namePrefix.push(spec(here));
      const version = property['x-kubernetes-object-ref-api-version'];
      const refKind = property['x-kubernetes-object-ref-kind'];
      if (typeof version === 'string' && typeof refKind === 'string') {
        const nameKey = property['x-kubernetes-object-ref-name-key'];
        result.nameReference.push({
          target: { kind: refKind, version },
          referrers: [spec([...here, typeof nameKey === 'string' ? nameKey : 'name'])],
        });
      }
      if (typeof property.$ref === 'string' && property.$ref !== '') {
        visit(kind, property.$ref, here, depth + 1);
      }
    }
  };
  for (const typeName of Object.keys(doc)) {
    const properties = propertiesOf(typeName);
    if (
      !properties ||
      !('kind' in properties) ||
      !('apiVersion' in properties) ||
      !('metadata' in properties)
    ) {
      continue;
    }
    visit(typeName.split('.').pop() ?? typeName, typeName, [], 0);
  }
  return mergeConfig(emptyConfig(), result);
}
