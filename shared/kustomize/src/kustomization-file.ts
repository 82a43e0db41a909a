import type { ConfinedFs } from './confined-fs.ts';
import { KustomizeError } from './errors.ts';
import { type HelmChart, type HelmGlobals, readHelmFields } from './helm/helm-chart-spec.ts';
import { parseYamlDocuments } from './load-resources.ts';
import type { JsonObject, JsonValue } from './resource.ts';
import { canonicalKeys } from './transformers/config.ts';
import type { Var } from './transformers/vars.ts';

/** The names kustomize looks for, in its order. */
export const kustomizationFileNames = ['kustomization.yaml', 'kustomization.yml', 'Kustomization'] as const;

export interface GeneratorOptions {
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  disableNameSuffixHash?: boolean;
  immutable?: boolean;
}

export interface GeneratorArgs {
  name?: string;
  namespace?: string;
  behavior?: string;
  literals?: string[];
  files?: string[];
  envs?: string[];
  options?: GeneratorOptions;
  /** Secrets only. */
  type?: string;
}

export interface Selector {
  group?: string;
  version?: string;
  kind?: string;
  name?: string;
  namespace?: string;
  labelSelector?: string;
  annotationSelector?: string;
}

export interface PatchEntry {
  path?: string;
  patch?: string;
  target?: Selector;
  options?: { allowNameChange?: boolean; allowKindChange?: boolean };
}

export interface FieldSpecEntry {
  group?: string;
  version?: string;
  kind?: string;
  path: string;
  create?: boolean;
}

export interface LabelEntry {
  pairs?: Record<string, string>;
  includeSelectors?: boolean;
  includeTemplates?: boolean;
  fields?: FieldSpecEntry[];
}

export interface ImageEntry {
  name?: string;
  newName?: string;
  newTag?: string;
  digest?: string;
  tagSuffix?: string;
}

export interface SortOptions {
  order?: 'legacy' | 'fifo';
  legacySortOptions?: { orderFirst?: string[]; orderLast?: string[] };
}

/** A parsed kustomization.yaml (kind Kustomization or Component), legacy fields folded in as kustomize does. */
export interface Kustomization {
  apiVersion: string;
  kind: 'Kustomization' | 'Component';
  /** The file name it was read from, e.g. `kustomization.yaml`. */
  fileName: string;
  namespace?: string;
  namePrefix?: string;
  nameSuffix?: string;
  commonLabels?: Record<string, string>;
  labels?: LabelEntry[];
  commonAnnotations?: Record<string, string>;
  patchesStrategicMerge?: string[];
  patchesJson6902?: { target?: Selector; path?: string; patch?: string }[];
  patches?: PatchEntry[];
  images?: ImageEntry[];
  replacements?: JsonObject[];
  replicas?: { name: string; count: number }[];
  sortOptions?: SortOptions;
  resources: string[];
  components?: string[];
  configMapGenerator?: GeneratorArgs[];
  secretGenerator?: GeneratorArgs[];
  generatorOptions?: GeneratorOptions;
  buildMetadata?: string[];
  openapi?: Record<string, string>;
  /** Deprecated `vars:`, defaulted as kustomize's Var.Defaulting does. */
  vars?: Var[];
  /** Transformer configuration files (`configurations:`). */
  configurations?: string[];
  /** OpenAPI definition files whose x-kubernetes-* extensions add transformer config (`crds:`). */
  crds?: string[];
  /** Builtin generator config objects: inline YAML, files or kustomization directories. */
  generators?: string[];
  /** Builtin transformer config objects: inline YAML, files or kustomization directories. */
  transformers?: string[];
  /** Charts to inflate (the legacy helmChartInflationGenerator folded in); see helm/inflate.ts. */
  helmCharts?: HelmChart[];
  helmGlobals?: HelmGlobals;
}

export const kustomizationVersion = 'kustomize.config.k8s.io/v1beta1';
export const componentVersion = 'kustomize.config.k8s.io/v1alpha1';

/** Fields kustomize knows but Mooring refuses, with the reason. */
const refused: Record<string, string> = {
  validators: 'validator plugins are not supported',
};

type Checker = (value: JsonValue, where: string) => void;

const fail = (where: string, what: string): never => {
  throw new KustomizeError(`invalid Kustomization: ${where} ${what}`);
};
const str: Checker = (v, w) => {
  if (typeof v !== 'string') fail(w, 'must be a string');
};
const bool: Checker = (v, w) => {
  if (typeof v !== 'boolean') fail(w, 'must be a boolean');
};
const int: Checker = (v, w) => {
  if (typeof v !== 'number' || !Number.isInteger(v)) fail(w, 'must be an integer');
};
const anyObject: Checker = (v, w) => {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) fail(w, 'must be a mapping');
};
const strMap: Checker = (v, w) => {
  anyObject(v, w);
  for (const [k, x] of Object.entries(v as JsonObject)) {
    if (typeof x !== 'string') fail(`${w}.${k}`, 'must be a string');
  }
};
const list =
  (item: Checker): Checker =>
  (v, w) => {
    if (!Array.isArray(v)) fail(w, 'must be a list');
    (v as JsonValue[]).forEach((x, i) => {
      item(x, `${w}[${i}]`);
    });
  };
/**
 * A struct with known fields: unknown ones are an error, as Go's DisallowUnknownFields makes them.
 * Go's json decoder matches a key to a field exactly, else case-insensitively (`nameprefix` sets
 * namePrefix; of two spellings the later wins, a null sets nothing): keys are renamed in place.
 */
const struct = (fields: Record<string, Checker>): Checker => {
  const lower = new Map(Object.keys(fields).map((f) => [f.toLowerCase(), f]));
  return (v, w) => {
    anyObject(v, w);
    const object = v as JsonObject;
    const entries = Object.entries(object);
    let renamed = false;
    for (const [k, x] of entries) {
      // Own fields only: `constructor` or `__proto__` must not find Object.prototype's.
      const field = Object.hasOwn(fields, k) ? k : lower.get(k.toLowerCase());
      const check = field === undefined ? undefined : fields[field];
      if (field === undefined || check === undefined) {
        throw new KustomizeError(`invalid Kustomization: json: unknown field "${k}"`);
      }
      if (field !== k) renamed = true;
      if (x !== null) check(x, w === '' ? field : `${w}.${field}`);
    }
    if (!renamed) return;
    for (const [k] of entries) delete object[k];
    for (const [k, x] of entries) {
      const field = Object.hasOwn(fields, k) ? k : (lower.get(k.toLowerCase()) as string);
      if (x !== null || !Object.hasOwn(object, field)) object[field] = x;
    }
  };
};

const selector = struct({
  group: str,
  version: str,
  kind: str,
  name: str,
  namespace: str,
  labelSelector: str,
  annotationSelector: str,
});
const generatorOptions = struct({
  labels: strMap,
  annotations: strMap,
  disableNameSuffixHash: bool,
  immutable: bool,
});
const generatorFields = {
  name: str,
  namespace: str,
  behavior: str,
  literals: list(str),
  files: list(str),
  envs: list(str),
  env: str,
  options: generatorOptions,
};
const fieldSpec = struct({ group: str, version: str, kind: str, path: str, create: bool });

const topLevel: Record<string, Checker> = {
  apiVersion: str,
  kind: str,
  metadata: anyObject,
  openapi: strMap,
  namePrefix: str,
  nameSuffix: str,
  namespace: str,
  commonLabels: strMap,
  labels: list(
    struct({ pairs: strMap, includeSelectors: bool, includeTemplates: bool, fields: list(fieldSpec) }),
  ),
  commonAnnotations: strMap,
  patchesStrategicMerge: list(str),
  patchesJson6902: list(struct({ target: selector, path: str, patch: str })),
  patches: list(
    struct({
      path: str,
      patch: str,
      target: selector,
      options: struct({ allowNameChange: bool, allowKindChange: bool }),
    }),
  ),
  images: list(struct({ name: str, newName: str, newTag: str, digest: str, tagSuffix: str })),
  imageTags: list(struct({ name: str, newName: str, newTag: str, digest: str, tagSuffix: str })),
  replacements: list(anyObject),
  replicas: list(struct({ name: str, count: int })),
  sortOptions: struct({
    order: str,
    legacySortOptions: struct({ orderFirst: list(str), orderLast: list(str) }),
  }),
  resources: list(str),
  bases: list(str),
  components: list(str),
  configMapGenerator: list(struct(generatorFields)),
  secretGenerator: list(struct({ ...generatorFields, type: str })),
  generatorOptions,
  buildMetadata: list(str),
  configurations: list(str),
  generators: list(str),
  transformers: list(str),
  crds: list(str),
  vars: list(anyObject),
  helmCharts: list(anyObject),
  helmGlobals: anyObject,
  helmChartInflationGenerator: list(anyObject),
};

const optStr = (v: JsonValue | undefined, where: string): string => {
  if (v === undefined) return '';
  if (typeof v !== 'string') fail(where, 'must be a string');
  return v as string;
};

/** Reads `vars:` as Go's json decoder does (keys match case-insensitively: `fieldpath` works). */
function parseVars(raw: JsonValue[]): Var[] {
  return raw.map((entry, i) => {
    const where = `vars[${i}]`;
    const v = canonicalKeys(entry, ['name', 'objref', 'fieldref'], `invalid Kustomization: ${where}`);
    const ref =
      v.objref === undefined
        ? {}
        : canonicalKeys(
            v.objref,
            ['apiVersion', 'group', 'version', 'kind', 'name', 'namespace'],
            `invalid Kustomization: ${where}.objref`,
          );
    const field =
      v.fieldref === undefined
        ? {}
        : canonicalKeys(v.fieldref, ['fieldPath'], `invalid Kustomization: ${where}.fieldref`);
    let group = optStr(ref.group, `${where}.objref.group`);
    let version = optStr(ref.version, `${where}.objref.version`);
    // Target.GVK: apiVersion, when set, overrides group and version (a lone part is the version).
    const apiVersion = optStr(ref.apiVersion, `${where}.objref.apiVersion`);
    if (apiVersion !== '') {
      const parts = apiVersion.split('/');
      if (parts.length === 2) [group, version] = parts as [string, string];
      else if (parts.length === 1) version = parts[0] as string;
    }
    return {
      name: optStr(v.name, `${where}.name`),
      objref: {
        group,
        version,
        kind: optStr(ref.kind, `${where}.objref.kind`),
        name: optStr(ref.name, `${where}.objref.name`),
        namespace: optStr(ref.namespace, `${where}.objref.namespace`),
      },
      fieldPath: optStr(field.fieldPath, `${where}.fieldref.fieldPath`) || 'metadata.name',
    };
  });
}

/** Finds the kustomization file in dir; undefined when there is none, an error when there are several. */
export function findKustomizationFile(fs: ConfinedFs, dir: string): string | undefined {
  const found = kustomizationFileNames.filter((name) => {
    const rel = dir === '' ? name : `${dir}/${name}`;
    return fs.exists(rel) && !fs.isDir(rel);
  });
  if (found.length > 1) throw new KustomizeError(`Found multiple kustomization files under: ${dir || '.'}`);
  return found[0];
}

/** Parses and validates a kustomization file's text the way kustomize 5.8 does (unknown fields are errors). */
export function parseKustomization(text: string, fileName: string): Kustomization {
  // sigs.k8s.io/yaml reads kustomization files as YAML 1.1: an unquoted `y` or `on` is a boolean.
  const docs = parseYamlDocuments(text, fileName, undefined, false, 'yaml-1.1', false);
  if (docs.length > 1) throw new KustomizeError(`${fileName} holds more than one YAML document`);
  const raw = docs[0];
  if (raw === null || raw === undefined) throw new KustomizeError(`kustomization.yaml is empty`);
  anyObject(raw as JsonValue, fileName);
  const doc = raw as JsonObject;
  for (const key of Object.keys(doc)) {
    const reason = Object.hasOwn(refused, key) ? refused[key] : undefined;
    if (reason !== undefined && doc[key] !== null) {
      throw new KustomizeError(`${fileName}: field "${key}": ${reason}`);
    }
  }
  struct(topLevel)(doc, '');

  const kind = (doc.kind as string | undefined) || 'Kustomization';
  if (kind !== 'Kustomization' && kind !== 'Component') {
    throw new KustomizeError(
      `Failed to read kustomization file ${fileName}: kind should be Kustomization or Component`,
    );
  }
  const required = kind === 'Component' ? componentVersion : kustomizationVersion;
  const apiVersion = (doc.apiVersion as string | undefined) || required;
  if (apiVersion !== required) {
    throw new KustomizeError(
      `Failed to read kustomization file ${fileName}: apiVersion for ${kind} should be ${required}`,
    );
  }
  const body = Object.keys(doc).filter((k) => k !== 'apiVersion' && k !== 'kind' && doc[k] !== null);
  if (body.length === 0) throw new KustomizeError('kustomization.yaml is empty');

  const k = doc as unknown as Kustomization & {
    bases?: string[];
    imageTags?: ImageEntry[];
    configMapGenerator?: (GeneratorArgs & { env?: string })[];
    secretGenerator?: (GeneratorArgs & { env?: string })[];
  };
  const result: Kustomization = {
    ...k,
    apiVersion,
    kind,
    fileName,
    // FixKustomization: bases are appended to resources, imageTags to images, env to envs.
    resources: [...(k.resources ?? []), ...(k.bases ?? [])],
  };
  delete (result as { bases?: unknown }).bases;
  delete (result as { imageTags?: unknown }).imageTags;
  delete (result as { metadata?: unknown }).metadata;
  if (k.images || k.imageTags) result.images = [...(k.images ?? []), ...(k.imageTags ?? [])];
  const fixEnv = (g: GeneratorArgs & { env?: string }): GeneratorArgs => {
    const { env, ...rest } = g;
    return env ? { ...rest, envs: [...(rest.envs ?? []), env] } : rest;
  };
  const helm = readHelmFields(doc);
  delete (result as { helmChartInflationGenerator?: unknown }).helmChartInflationGenerator;
  if (helm.charts) result.helmCharts = helm.charts;
  else delete result.helmCharts;
  if (helm.globals) result.helmGlobals = helm.globals;
  else delete result.helmGlobals;
  if (Array.isArray(doc.vars)) result.vars = parseVars(doc.vars);
  else delete result.vars;
  if (!Array.isArray(doc.configurations)) delete result.configurations;
  if (k.configMapGenerator) result.configMapGenerator = k.configMapGenerator.map(fixEnv);
  if (k.secretGenerator) result.secretGenerator = k.secretGenerator.map(fixEnv);
  if (
    k.sortOptions?.order !== undefined &&
    k.sortOptions.order !== 'legacy' &&
    k.sortOptions.order !== 'fifo'
  ) {
    throw new KustomizeError(`${fileName}: sortOptions.order must be legacy or fifo`);
  }
  for (const m of k.buildMetadata ?? []) {
    if (m !== 'originAnnotations' && m !== 'transformerAnnotations' && m !== 'managedByLabel') {
      throw new KustomizeError(
        `${fileName}: buildMetadata option ${JSON.stringify(m)} is not one of originAnnotations, transformerAnnotations, managedByLabel`,
      );
    }
  }
  return result;
}

/** Reads and parses the kustomization file in dir, or returns undefined when dir has none. */
export function readKustomization(fs: ConfinedFs, dir: string): Kustomization | undefined {
  const name = findKustomizationFile(fs, dir);
  if (name === undefined) return undefined;
  const text = fs.readFile(dir === '' ? name : `${dir}/${name}`).toString('utf8');
  return parseKustomization(text, dir === '' ? name : `${dir}/${name}`);
}
