import type { ConfinedFs } from './confined-fs.ts';
import { fileInDir } from './confined-fs.ts';
import { KustomizeError } from './errors.ts';
import type { Kustomization, Selector } from './kustomization-file.ts';
import { parseYamlDocuments, type YamlLimits } from './load-resources.ts';
import {
  type PluginEnv,
  pluginIdentity,
  runConfiguredGenerator,
  runConfiguredTransformer,
} from './plugins.ts';
import type { JsonObject, JsonValue, Resource } from './resource.ts';
import { overlayBuiltinSchema } from './smp/schema.ts';
import { addAnnotations } from './transformers/annotations.ts';
import {
  configFromCrds,
  defaultConfig,
  emptyConfig,
  mergeConfig,
  parseTransformerConfig,
  type TransformerConfig,
} from './transformers/config.ts';
import { setImages } from './transformers/images.ts';
import { addLabels, setMapEntries } from './transformers/labels.ts';
import { addNamePrefixSuffix } from './transformers/name-prefix-suffix.ts';
import { setNamespace } from './transformers/namespace.ts';
import { applyPatches, type PatchInput } from './transformers/patches.ts';
import { applyReplacements, type Replacement } from './transformers/replacements.ts';
import { setReplicas } from './transformers/replicas.ts';

/** Where files named in a kustomization may be read from: rootOnly is kustomize's default restriction. */
interface Where {
  fs: ConfinedFs;
  dir: string;
  rootOnly: boolean;
}

const fileIn = (w: Where, path: string): string => fileInDir(w.dir, path, w.rootOnly, w.fs);

const readText = (w: Where, path: string): string => w.fs.readFile(fileIn(w, path)).toString('utf8');

/** The OpenAPI schema a build uses: once set, later kustomizations' `openapi:` fields are ignored. */
export interface OpenApiSchema {
  set: boolean;
  document?: JsonObject;
  /** The build has loaded resources (kyaml has checked a namespace scope with its default schema). */
  resourcesSeen?: boolean;
}

/**
 * kyaml's SetSchema: the root kustomization always sets the schema (reset), a base or component
 * only while none is set. `version` names a builtin schema (only v1.21.2, the default), `path` a
 * custom one; both at once is an error.
 */
export function setOpenApiSchema(
  schema: OpenApiSchema,
  fs: ConfinedFs,
  dir: string,
  k: Kustomization,
  limits: YamlLimits,
  rootOnly: boolean,
  reset: boolean,
): void {
  if (schema.set && !reset) return;
  const field = k.openapi ?? {};
  const versionProvided = Object.hasOwn(field, 'version');
  if (field.path !== undefined) {
    if (versionProvided)
      throw new KustomizeError('builtin version and custom schema provided, cannot use both');
    const document = loadOpenApi({ fs, dir, rootOnly }, k, limits);
    schema.set = true;
    // A base or component setting it after resources were read: kyaml then parses its builtin schema too.
    if (document !== undefined && !reset && schema.resourcesSeen) overlayBuiltinSchema(document);
    if (document !== undefined) schema.document = document;
    else delete schema.document;
    return;
  }
  delete schema.document;
  const version = field.version ?? '';
  schema.set = version !== '';
  if (version !== '' && version !== 'v1.21.2') {
    throw new KustomizeError('the specified OpenAPI version is not built in');
  }
}

/** The kustomization's `openapi: {path: …}` document, parsed, for merge keys of custom resources. */
export function loadOpenApi(w: Where, k: Kustomization, limits: YamlLimits): JsonObject | undefined {
  const path = k.openapi?.path;
  if (path === undefined) return undefined;
  const [doc] = parseYamlDocuments(readText(w, path), fileIn(w, path), limits);
  if (doc === null || doc === undefined || typeof doc !== 'object' || Array.isArray(doc)) {
    throw new KustomizeError(`openapi document ${path} is not a mapping`);
  }
  return doc;
}

const target = (s: Selector | undefined): Selector | undefined => (s === undefined ? undefined : { ...s });

/** The patches of one kustomization field, with files read through the confined fs. */
function patchInputs(
  w: Where,
  k: Kustomization,
): { smp: PatchInput[]; patches: PatchInput[]; json6902: PatchInput[] } {
  const smp: PatchInput[] = (k.patchesStrategicMerge ?? []).map((entry) => {
    // kustomize treats an entry that names an existing file as a path, anything else as inline YAML.
    let isFile = false;
    try {
      isFile = !entry.includes('\n') && w.fs.exists(fileIn(w, entry)) && !w.fs.isDir(fileIn(w, entry));
    } catch {
      isFile = false;
    }
    return isFile
      ? { patch: readText(w, entry), source: fileIn(w, entry), format: 'strategicMerge' }
      : { patch: entry, source: 'inline', format: 'strategicMerge' };
  });
  const patches: PatchInput[] = (k.patches ?? []).map((p) => {
    if (p.path !== undefined && p.patch !== undefined) {
      throw new KustomizeError('a patch may set path or patch, not both');
    }
    if (p.path === undefined && p.patch === undefined)
      throw new KustomizeError('a patch must set path or patch');
    const input: PatchInput = {
      patch: p.path !== undefined ? readText(w, p.path) : (p.patch as string),
      source: p.path !== undefined ? fileIn(w, p.path) : 'inline',
    };
    if (p.target) input.target = target(p.target);
    if (p.options) input.options = { ...p.options };
    return input;
  });
  const json6902: PatchInput[] = (k.patchesJson6902 ?? []).map((p) => {
    if (p.target === undefined) throw new KustomizeError('a patchesJson6902 entry must have a target');
    const text = p.path !== undefined ? readText(w, p.path) : p.patch;
    if (text === undefined) throw new KustomizeError('a patchesJson6902 entry must set path or patch');
    return {
      patch: text,
      target: { ...p.target },
      source: p.path !== undefined ? fileIn(w, p.path) : 'inline',
      format: 'json6902',
    };
  });
  return { smp, patches, json6902 };
}

/** The kustomization's replacements, with `path:` entries read from their files. */
function replacements(w: Where, k: Kustomization, limits: YamlLimits): Replacement[] {
  const out: JsonValue[] = [];
  for (const entry of k.replacements ?? []) {
    if (typeof entry.path === 'string') {
      if (Object.keys(entry).length > 1) {
        throw new KustomizeError(
          `replacement ${entry.path}: a replacement with a path may not set other fields`,
        );
      }
      for (const doc of parseYamlDocuments(readText(w, entry.path), fileIn(w, entry.path), limits)) {
        if (Array.isArray(doc)) out.push(...doc);
        else out.push(doc);
      }
    } else out.push(entry);
  }
  return out as unknown as Replacement[];
}

/** Where a kustomization's transformers record themselves for `buildMetadata: [transformerAnnotations]`. */
export interface TransformerRecording {
  /** The kustomization file, relative to the directory the build started in. */
  configuredIn: string;
}

/** kustomize's MakeTransformerConfig: the defaults merged with the kustomization's `configurations:` files. */
export function loadTransformerConfig(
  fs: ConfinedFs,
  dir: string,
  k: Kustomization,
  rootOnly = true,
): TransformerConfig {
  const paths = k.configurations ?? [];
  const crds = k.crds ?? [];
  if (crds.length > 0) {
    // kustomize merges the `crds:` config after the `configurations:` one.
    const w: Where = { fs, dir, rootOnly };
    let config = loadTransformerConfig(fs, dir, { ...k, crds: [] }, rootOnly);
    for (const path of crds) config = mergeConfig(config, configFromCrds(readText(w, path), fileIn(w, path)));
    return config;
  }
  if (paths.length === 0) return defaultConfig();
  const w: Where = { fs, dir, rootOnly };
  let custom = emptyConfig();
  for (const path of paths)
    custom = mergeConfig(custom, parseTransformerConfig(readText(w, path), fileIn(w, path)));
  return mergeConfig(defaultConfig(), custom);
}

/** Runs kustomize's builtin transformers over the accumulated resources, in kustomize's order. */
export function runTransformers(
  fs: ConfinedFs,
  dir: string,
  k: Kustomization,
  ra: Resource[],
  limits: YamlLimits,
  rootOnly = true,
  recording?: TransformerRecording,
  config: TransformerConfig = defaultConfig(),
  /** The build's schema (kustomize's is global, set by the first kustomization naming one); else k's own. */
  schema?: OpenApiSchema,
): void {
  const w: Where = { fs, dir, rootOnly };
  const openapi = schema ? schema.document : loadOpenApi(w, k, limits);
  const context = openapi === undefined ? { yamlLimits: limits } : { openapi, yamlLimits: limits };
  const { smp, patches, json6902 } = patchInputs(w, k);
  // kustomize notes every builtin transformer instance on every resource after it ran.
  const ran = (configuredBy: string): void => {
    if (recording === undefined) return;
    for (const r of ra) {
      r.transformations ??= [];
      r.transformations.push({ configuredIn: recording.configuredIn, configuredBy });
    }
  };
  if (smp.length > 0) {
    applyPatches(ra, smp, context);
    ran('PatchStrategicMergeTransformer');
  }
  for (const patch of patches) {
    applyPatches(ra, [patch], context);
    ran('PatchTransformer');
  }
  if (k.namespace) {
    setNamespace(ra, k.namespace, { fieldSpecs: config.namespace });
    ran('NamespaceTransformer');
  }
  if (k.namePrefix) {
    addNamePrefixSuffix(ra, k.namePrefix, undefined, config.namePrefix);
    ran('PrefixTransformer');
  }
  if (k.nameSuffix) {
    addNamePrefixSuffix(ra, undefined, k.nameSuffix, config.nameSuffix);
    ran('SuffixTransformer');
  }
  const commonLabels = k.commonLabels ?? {};
  if ((k.labels ?? []).length > 0 || Object.keys(commonLabels).length > 0) {
    for (const label of k.labels ?? []) {
      addLabels(ra, label.pairs ?? {}, {
        includeSelectors: label.includeSelectors === true,
        includeTemplates: label.includeTemplates === true,
        fields: label.fields ?? [],
        config,
      });
      ran('LabelTransformer');
    }
    // kustomize always configures the commonLabels instance once labels of either kind exist.
    // kustomize gives the commonLabels instance the configuration's commonLabels specs alone.
    setMapEntries(ra, commonLabels, config.commonLabels);
    ran('LabelTransformer');
  }
  if (k.commonAnnotations && Object.keys(k.commonAnnotations).length > 0) {
    addAnnotations(ra, k.commonAnnotations, config.commonAnnotations);
    ran('AnnotationsTransformer');
  }
  for (const patch of json6902) {
    applyPatches(ra, [patch], context);
    ran('PatchJson6902Transformer');
  }
  for (const replica of k.replicas ?? []) {
    setReplicas(ra, [replica], config.replicas);
    ran('ReplicaCountTransformer');
  }
  for (const image of k.images ?? []) {
    setImages(ra, [{ ...image, name: image.name ?? '' }], config.images);
    ran('ImageTagTransformer');
  }
  const rs = replacements(w, k, limits);
  if (rs.length > 0) {
    applyReplacements(ra, rs);
    ran('ReplacementTransformer');
  }
}

/** A config object from `generators:`/`transformers:`, with the file kustomize says configured it. */
export interface PluginConfig {
  object: JsonObject;
  /** Relative to the fs root: the config's file, or the kustomization file for an inline one. */
  configuredIn: string;
}

function pluginEnv(
  fs: ConfinedFs,
  dir: string,
  k: Kustomization,
  limits: YamlLimits,
  rootOnly: boolean,
  schema?: OpenApiSchema,
): PluginEnv {
  const w: Where = { fs, dir, rootOnly };
  const openapi = schema ? schema.document : loadOpenApi(w, k, limits);
  const env: PluginEnv = {
    fs,
    dir,
    rootOnly,
    limits,
    readReplacements: (entries) => replacements(w, { ...k, replacements: entries }, limits),
  };
  if (openapi !== undefined) env.openapi = openapi;
  return env;
}

/** Runs the builtin generators configured under `generators:`, in order (after the generator fields). */
export function runConfiguredGenerators(
  fs: ConfinedFs,
  dir: string,
  k: Kustomization,
  ra: Resource[],
  limits: YamlLimits,
  rootOnly: boolean,
  configs: PluginConfig[],
  origins: boolean,
  schema?: OpenApiSchema,
): void {
  if (configs.length === 0) return;
  const env = pluginEnv(fs, dir, k, limits, rootOnly, schema);
  for (const c of configs) runConfiguredGenerator(env, c.object, ra, origins ? c.configuredIn : undefined);
}

/** Runs the builtin transformers configured under `transformers:`, in order (after the builtin fields). */
export function runConfiguredTransformers(
  fs: ConfinedFs,
  dir: string,
  k: Kustomization,
  ra: Resource[],
  limits: YamlLimits,
  rootOnly: boolean,
  configs: PluginConfig[],
  recording: boolean,
  schema?: OpenApiSchema,
): void {
  if (configs.length === 0) return;
  const env = pluginEnv(fs, dir, k, limits, rootOnly, schema);
  for (const c of configs) {
    runConfiguredTransformer(env, c.object, ra);
    if (!recording) continue;
    const id = pluginIdentity(c.object);
    for (const r of ra) {
      r.transformations ??= [];
      r.transformations.push({
        configuredIn: c.configuredIn,
        configuredBy: id.kind,
        ...(id.name !== undefined ? { name: id.name } : {}),
        ...(id.namespace !== undefined ? { namespace: id.namespace } : {}),
      });
    }
  }
}
