import { posix } from 'node:path';
import type { ConfinedFs } from './confined-fs.ts';
import { fileInDir, normalizeRel } from './confined-fs.ts';
import { KustomizeError } from './errors.ts';
import { generateKustomization, type KustomizationOverrides, mergeOverrides } from './flux-generator.ts';
import { runGenerators } from './generators.ts';
import { hashResource } from './hash.ts';
import { type HelmRenderer, inflateHelmCharts } from './helm/inflate.ts';
import { type Kustomization, parseKustomization, readKustomization } from './kustomization-file.ts';
import { defaultYamlLimits, isRemote, parseResources, type YamlLimits } from './load-resources.ts';
import { legacySort } from './order.ts';
import { effectiveNamespace, formatId, idOf } from './res-id.ts';
import type { JsonObject, Resource } from './resource.ts';
import {
  loadTransformerConfig,
  type OpenApiSchema,
  type PluginConfig,
  runConfiguredGenerators,
  runConfiguredTransformers,
  runTransformers,
  setOpenApiSchema,
} from './run-transformers.ts';
import { emptyConfig, mergeConfig, type TransformerConfig } from './transformers/config.ts';
import { fixNameReferences } from './transformers/name-reference.ts';
import { mergeVarSet, mergeVars, resolveVars, type Var } from './transformers/vars.ts';

/** Caps on one build beyond what the confined fs enforces. */
export interface BuildLimits extends YamlLimits {
  /** How deep kustomizations may nest through resources and components. */
  maxKustomizationDepth: number;
  /** Resources in the final output. */
  maxResources: number;
  /** Characters `vars` substitution may add to the build (a small input can repeat a large value). */
  maxVarExpansion: number;
}

export const defaultBuildLimits: BuildLimits = {
  ...defaultYamlLimits,
  maxKustomizationDepth: 32,
  maxResources: 50_000,
  maxVarExpansion: 64 * 1024 * 1024,
};

export interface BuildOptions {
  limits?: Partial<BuildLimits>;
  /** Flux mode: a directory without a kustomization file builds every YAML file under it. */
  generateWhenMissing?: boolean;
  /** Flux Kustomization spec fields merged into the top-level kustomization. */
  overrides?: KustomizationOverrides;
  /**
   * `rootOnly` (kustomize's default): files a kustomization names must sit in or below its directory.
   * `none` (what Flux uses): any file inside the fs root. Directories (bases, components) may always be elsewhere.
   */
  loadRestrictions?: 'rootOnly' | 'none';
  /** Renders `helmCharts:` (kustomize's --enable-helm); without it a kustomization with charts is refused. */
  helm?: HelmRenderer;
}

/** What one build carries through the recursion. */
interface Context {
  fs: ConfinedFs;
  limits: BuildLimits;
  /** The directory the build started in; origin paths are relative to it. */
  root: string;
  rootOnly: boolean;
  /** The top kustomization asks for transformer annotations (kustomize passes its buildMetadata down). */
  recordTransformers: boolean;
  /** The top kustomization asks for origin annotations. */
  recordOrigins: boolean;
  /** The OpenAPI schema of the whole build, as kyaml's global one. */
  schema: OpenApiSchema;
  helm: HelmRenderer | undefined;
}

const managedByLabel = 'app.kubernetes.io/managed-by';
const managedByValue = 'kustomize-v5.8.0';
const originAnnotation = 'config.kubernetes.io/origin';
const transformationsAnnotation = 'alpha.config.kubernetes.io/transformations';
const localConfigAnnotation = 'config.kubernetes.io/local-config';

const join = (dir: string, entry: string): string => {
  if (posix.isAbsolute(entry)) {
    throw new KustomizeError(`absolute path ${JSON.stringify(entry)} is not allowed: paths must be relative`);
  }
  return normalizeRel(dir === '' ? entry : `${dir}/${entry}`);
};

/** What kustomize's ResAccumulator carries besides the resources: the transformer config and the vars. */
interface Accumulated {
  config: TransformerConfig;
  vars: Map<string, Var>;
}

const emptyAccumulated = (): Accumulated => ({ config: emptyConfig(), vars: new Map() });

/** A resource's current id as a key that is equal exactly when kustomize's ResId.Equals is. */
function idKey(r: Resource): string {
  const id = idOf(r.object);
  return `${id.group}|${id.version}|${id.kind}|${id.name}|${effectiveNamespace(id)}`;
}

/**
 * kustomize's resmap Append: a second resource with the same current id is an error.
 * `seen` holds the keys of `resources`; callers keep it in step while nothing renames resources.
 */
function append(resources: Resource[], incoming: Resource[], seen: Set<string>): void {
  for (const r of incoming) {
    const key = idKey(r);
    if (seen.has(key)) {
      throw new KustomizeError(
        `may not add resource with an already registered id: ${formatId(idOf(r.object))}`,
      );
    }
    seen.add(key);
    resources.push(r);
  }
}

function loadTarget(ctx: Context, dir: string): Kustomization {
  const k = readKustomization(ctx.fs, dir);
  if (k === undefined) {
    throw new KustomizeError(
      `unable to find one of 'kustomization.yaml', 'kustomization.yml' or 'Kustomization' in directory '${dir || '.'}'`,
    );
  }
  return k;
}

/** Adds the resources of one `resources:` entry: a file of manifests or a directory with a kustomization. */
async function accumulateResource(
  ctx: Context,
  dir: string,
  entry: string,
  into: Resource[],
  chain: string[],
  seen: Set<string>,
  parent: Kustomization,
  acc: Accumulated,
): Promise<void> {
  if (isRemote(entry)) {
    throw new KustomizeError(`${entry}: remote resources are not supported`);
  }
  const rel = join(dir, entry);
  if (!ctx.fs.exists(rel)) {
    throw new KustomizeError(`resource ${JSON.stringify(entry)} in ${dir || '.'} does not exist`);
  }
  if (!ctx.fs.isDir(rel)) {
    const text = ctx.fs.readFile(fileInDir(dir, entry, ctx.rootOnly, ctx.fs)).toString('utf8');
    const resources = parseResources(text, rel, ctx.limits).map(
      (object): Resource => ({ object, previousIds: [], origin: { path: posix.relative(ctx.root, rel) } }),
    );
    append(into, resources, seen);
    if (resources.length > 0) ctx.schema.resourcesSeen = true;
    return;
  }
  const k = inheritNamespace(loadTarget(ctx, rel), parent);
  setOpenApiSchema(ctx.schema, ctx.fs, rel, k, ctx.limits, ctx.rootOnly, false);
  if (k.kind === 'Component') {
    throw new KustomizeError(`expected kind != 'Component' for path '${rel}'`);
  }
  const sub: Resource[] = [];
  const subAcc = emptyAccumulated();
  await accumulateTarget(ctx, rel, k, sub, enter(ctx, chain, rel), subAcc);
  append(into, sub, seen);
  // kustomize's MergeAccumulator: the base's transformer config and vars join the parent's.
  try {
    acc.config = mergeConfig(acc.config, subAcc.config);
    mergeVarSet(acc.vars, subAcc.vars.values());
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new KustomizeError(`recursed merging from path '${rel}': ${why}`);
  }
}

/**
 * kustomize v5.8.0 (api v0.21.0) gives a base or component without a namespace its parent's, so the
 * child's own namespace transformer already applies it (5.8.1 reverted this; we match 5.8.0).
 */
function inheritNamespace(child: Kustomization, parent: Kustomization): Kustomization {
  return !child.namespace && parent.namespace ? { ...child, namespace: parent.namespace } : child;
}

/** Refuses a kustomization that includes itself, directly or through others, and over-deep nesting. */
function enter(ctx: Context, chain: string[], next: string): string[] {
  const at = chain.indexOf(next);
  if (at >= 0) {
    const cycle = [...chain.slice(at), next].map((d) => d || '.').join(' -> ');
    throw new KustomizeError(`kustomization cycle detected: ${cycle}`);
  }
  if (chain.length >= ctx.limits.maxKustomizationDepth) {
    throw new KustomizeError(
      `kustomizations nest more than ${ctx.limits.maxKustomizationDepth} levels deep at ${next || '.'}`,
    );
  }
  return [...chain, next];
}

/**
 * kustomize's accumulateTarget: resources, then generators, then components (which see and may change
 * everything accumulated so far), then this kustomization's transformers.
 */
async function accumulateTarget(
  ctx: Context,
  dir: string,
  k: Kustomization,
  ra: Resource[],
  chain: string[],
  acc: Accumulated,
): Promise<void> {
  // Nothing renames resources while they accumulate, so one key set serves the whole loop.
  const seen = new Set(ra.map(idKey));
  for (const entry of k.resources) await accumulateResource(ctx, dir, entry, ra, chain, seen, k, acc);
  acc.config = mergeConfig(acc.config, loadTransformerConfig(ctx.fs, dir, k, ctx.rootOnly));
  runGenerators(ctx.fs, dir, k, ra, ctx.rootOnly);
  await inflateHelmCharts({ fs: ctx.fs, dir, rootOnly: ctx.rootOnly, limits: ctx.limits }, k, ra, ctx.helm);
  const generators = await loadPluginConfigs(ctx, dir, k, k.generators ?? [], chain);
  runConfiguredGenerators(
    ctx.fs,
    dir,
    k,
    ra,
    ctx.limits,
    ctx.rootOnly,
    generators,
    ctx.recordOrigins,
    ctx.schema,
  );
  for (const entry of k.components ?? []) {
    if (isRemote(entry)) throw new KustomizeError(`${entry}: remote components are not supported`);
    const rel = join(dir, entry);
    const next = enter(ctx, chain, rel);
    const component = inheritNamespace(loadTarget(ctx, rel), k);
    setOpenApiSchema(ctx.schema, ctx.fs, rel, component, ctx.limits, ctx.rootOnly, false);
    if (component.kind !== 'Component') {
      throw new KustomizeError(`expected kind 'Component' for path '${rel}' but got '${component.kind}'`);
    }
    // A component works on its parent's accumulator: resources, config and vars alike.
    await accumulateTarget(ctx, rel, component, ra, next, acc);
  }
  const recording = ctx.recordTransformers
    ? { configuredIn: posix.relative(ctx.root, k.fileName) }
    : undefined;
  // kustomize configures the builtin fields' transformers and then the listed ones, and runs them in that order.
  const transformers = (await loadPluginConfigs(ctx, dir, k, k.transformers ?? [], chain)).map((c) => ({
    ...c,
    configuredIn: posix.relative(ctx.root, c.configuredIn),
  }));
  runTransformers(ctx.fs, dir, k, ra, ctx.limits, ctx.rootOnly, recording, acc.config, ctx.schema);
  runConfiguredTransformers(
    ctx.fs,
    dir,
    k,
    ra,
    ctx.limits,
    ctx.rootOnly,
    transformers,
    ctx.recordTransformers,
    ctx.schema,
  );
  if (ra.length > ctx.limits.maxResources) {
    throw new KustomizeError(`the build has more than ${ctx.limits.maxResources} resources`);
  }
  mergeVars(ra, acc.vars, k.vars ?? []);
}

/**
 * The config objects of a `generators:` or `transformers:` list, as kustomize's configureExternal*
 * reads them: an entry that parses as resources is inline YAML, anything else a file or a
 * kustomization directory, built like a `resources:` entry (so a base may transform its configs).
 */
async function loadPluginConfigs(
  ctx: Context,
  dir: string,
  k: Kustomization,
  entries: string[],
  chain: string[],
): Promise<PluginConfig[]> {
  const inline: Resource[] = [];
  const seen = new Set<string>();
  const paths: string[] = [];
  for (const entry of entries) {
    let objects: JsonObject[] | undefined;
    try {
      objects = parseResources(entry, k.fileName, ctx.limits);
    } catch {
      objects = undefined;
    }
    if (objects === undefined || objects.length === 0) {
      paths.push(entry);
      continue;
    }
    append(
      inline,
      objects.map((object): Resource => ({ object, previousIds: [], origin: { path: k.fileName } })),
      seen,
    );
  }
  const loaded: Resource[] = [];
  for (const entry of paths) {
    await accumulateResource(ctx, dir, entry, loaded, chain, seen, k, emptyAccumulated());
  }
  // accumulateResource notes origins relative to the build root; configuredIn is relative to the fs root.
  return [
    ...inline.map((r) => ({ object: r.object, configuredIn: k.fileName })),
    ...loaded.map((r) => ({ object: r.object, configuredIn: posix.join(ctx.root, r.origin?.path ?? '') })),
  ];
}

/** Appends the 10-character content hash to generated ConfigMap and Secret names (kustomize's HashTransformer). */
function addHashSuffixes(resources: Resource[]): void {
  for (const r of resources) {
    if (!r.generated?.appendHash) continue;
    const hash = hashResource(r.object);
    r.previousIds.push(idOf(r.object));
    const metadata = r.object.metadata as JsonObject;
    metadata.name = `${metadata.name as string}-${hash}`;
  }
}

function isLocalConfig(r: Resource): boolean {
  const metadata = r.object.metadata as JsonObject | undefined;
  const annotations = metadata?.annotations as JsonObject | undefined;
  const value = annotations?.[localConfigAnnotation];
  return value !== undefined && value !== 'false';
}

/** Loads the top kustomization, generating one in Flux mode, with Flux overrides merged in. */
function loadRoot(ctx: Context, dir: string, options: BuildOptions): Kustomization {
  let k = readKustomization(ctx.fs, dir);
  if (k === undefined) {
    if (!options.generateWhenMissing) return loadTarget(ctx, dir);
    const fileName = dir === '' ? 'kustomization.yaml' : `${dir}/kustomization.yaml`;
    k = parseKustomization(JSON.stringify(generateKustomization(ctx.fs, dir)), fileName);
  }
  const exists = (component: string): boolean => {
    try {
      return ctx.fs.isDir(join(dir, component));
    } catch {
      return false;
    }
  };
  return options.overrides ? mergeOverrides(k, options.overrides, exists) : k;
}

/** Builds the kustomization at `path` (relative to the fs root) as `kustomize build` does. */
export async function build(fs: ConfinedFs, path: string, options: BuildOptions = {}): Promise<Resource[]> {
  const dir = normalizeRel(path);
  const ctx: Context = {
    fs,
    limits: { ...defaultBuildLimits, ...options.limits },
    root: dir,
    rootOnly: (options.loadRestrictions ?? 'rootOnly') === 'rootOnly',
    recordTransformers: false,
    recordOrigins: false,
    schema: { set: false },
    helm: options.helm,
  };
  if (!fs.isDir(dir)) throw new KustomizeError(`path ${JSON.stringify(path)} is not a directory`);
  const k = loadRoot(ctx, dir, options);
  ctx.recordTransformers = (k.buildMetadata ?? []).includes('transformerAnnotations');
  ctx.recordOrigins = (k.buildMetadata ?? []).includes('originAnnotations');
  setOpenApiSchema(ctx.schema, fs, dir, k, ctx.limits, ctx.rootOnly, true);
  // A Component built directly runs as a kustomization would (kustomize refuses one only as a resource).
  const ra: Resource[] = [];
  const acc = emptyAccumulated();
  await accumulateTarget(ctx, dir, k, ra, [dir], acc);
  addHashSuffixes(ra);
  fixNameReferences(ra, acc.config.nameReference);
  // With the references fixed, vars resolve (kustomize's ResolveVars), before local configs drop.
  resolveVars(ra, acc.vars, acc.config.varReference, ctx.limits.maxVarExpansion);
  let out = ra.filter((r) => !isLocalConfig(r));
  const sort = k.sortOptions;
  if (sort === undefined || sort.order === 'legacy') {
    out = legacySort(out, sort?.legacySortOptions?.orderFirst, sort?.legacySortOptions?.orderLast);
  } else if (sort.legacySortOptions !== undefined) {
    throw new KustomizeError(
      `the field 'sortOptions.legacySortOptions' is set but the selected sort order is '${sort.order}', not 'legacy'`,
    );
  }
  const metadataOptions = k.buildMetadata ?? [];
  for (const r of out) {
    const metadata = r.object.metadata as JsonObject;
    stringifyAnnotations(metadata);
    if (metadataOptions.includes('managedByLabel')) {
      metadata.labels = { ...(metadata.labels as JsonObject | undefined), [managedByLabel]: managedByValue };
    }
    const common = options.overrides?.commonMetadata;
    if (common?.labels && Object.keys(common.labels).length > 0) {
      metadata.labels = { ...(metadata.labels as JsonObject | undefined), ...common.labels };
    }
    if (common?.annotations && Object.keys(common.annotations).length > 0) {
      metadata.annotations = { ...(metadata.annotations as JsonObject | undefined), ...common.annotations };
    }
    if (metadataOptions.includes('transformerAnnotations') && r.transformations?.length) {
      metadata.annotations = {
        ...(metadata.annotations as JsonObject | undefined),
        [transformationsAnnotation]: r.transformations
          .map(
            (t) =>
              `- configuredIn: ${t.configuredIn}\n  configuredBy:\n    apiVersion: builtin\n    kind: ${t.configuredBy}\n` +
              (t.name !== undefined ? `    name: ${t.name}\n` : '') +
              (t.namespace !== undefined ? `    namespace: ${t.namespace}\n` : ''),
          )
          .join(''),
      };
    }
    if (metadataOptions.includes('originAnnotations') && r.origin !== undefined) {
      metadata.annotations = {
        ...(metadata.annotations as JsonObject | undefined),
        [originAnnotation]: originText(dir, r.origin),
      };
    }
  }
  return out;
}

/**
 * kustomize ends every build (after name references are fixed) by rewriting metadata.annotations as a
 * string map of the values' text, so a value a patch or replacement set as a number or boolean comes out
 * quoted, and a null a JSON patch wrote comes out as "null" (an empty value in a file became "" at load).
 */
function stringifyAnnotations(metadata: JsonObject): void {
  const annotations = metadata.annotations;
  // kyaml clears an annotations field left null or empty (labels stay as written).
  if (annotations === null || (typeof annotations === 'object' && Object.keys(annotations).length === 0)) {
    delete metadata.annotations;
    return;
  }
  if (typeof annotations !== 'object' || Array.isArray(annotations)) return;
  for (const [key, value] of Object.entries(annotations)) {
    if (typeof value === 'string') continue;
    annotations[key] =
      value === null ? 'null' : typeof value === 'object' ? JSON.stringify(value) : String(value);
  }
}

/** The YAML text kustomize stores in config.kubernetes.io/origin. */
function originText(root: string, origin: NonNullable<Resource['origin']>): string {
  if (origin.configuredIn !== undefined) {
    const configuredIn = posix.relative(root, origin.configuredIn);
    return (
      `configuredIn: ${configuredIn}\nconfiguredBy:\n  apiVersion: builtin\n  kind: ${origin.configuredBy ?? ''}\n` +
      (origin.configuredByName !== undefined ? `  name: ${origin.configuredByName}\n` : '') +
      (origin.configuredByNamespace !== undefined ? `  namespace: ${origin.configuredByNamespace}\n` : '')
    );
  }
  return `path: ${origin.path}\n`;
}
