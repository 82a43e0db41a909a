// kustomize's builtin plugins configured by objects listed under a kustomization's `generators:` and
// `transformers:` (`apiVersion: builtin`, kind ConfigMapGenerator, PatchTransformer, …), which kustomize
// runs without enabling plugins. Each reuses the engine's own implementation of that builtin, fed
// from the config object's fields as api/internal/builtins/*.go reads them. Any other config (an
// exec or Go plugin, a KRM function) is refused as kustomize does with plugins disabled.
import type { ConfinedFs } from './confined-fs.ts';
import { fileInDir } from './confined-fs.ts';
import { KustomizeError } from './errors.ts';
import { absorb, generate } from './generators.ts';
import { hashResource } from './hash.ts';
import type { GeneratorArgs } from './kustomization-file.ts';
import type { YamlLimits } from './load-resources.ts';
import { formatId, idOf, isObject } from './res-id.ts';
import type { JsonObject, Resource } from './resource.ts';
import type { OpenApiDocument } from './smp/schema.ts';
import { addAnnotations } from './transformers/annotations.ts';
import type { FieldSpec } from './transformers/field-specs.ts';
import { type ImageOverride, setImages } from './transformers/images.ts';
import { setMapEntries } from './transformers/labels.ts';
import { addNamePrefixSuffix } from './transformers/name-prefix-suffix.ts';
import { type RoleBindingSubjectMode, setNamespace } from './transformers/namespace.ts';
import { applyPatches, type PatchInput } from './transformers/patches.ts';
import { applyReplacements, type Replacement } from './transformers/replacements.ts';
import { setReplicas } from './transformers/replicas.ts';

/** What a configured plugin may read: files resolve against the kustomization that lists it. */
export interface PluginEnv {
  fs: ConfinedFs;
  dir: string;
  rootOnly: boolean;
  limits: YamlLimits;
  openapi?: OpenApiDocument;
  /** Reads a kustomization's `replacements:` entries (with `path:` files) as the field does. */
  readReplacements: (entries: JsonObject[]) => Replacement[];
}

/** Who configured a resource or ran over it, for origin and transformer annotations. */
export interface PluginIdentity {
  kind: string;
  name?: string;
  namespace?: string;
}

const GENERATORS = new Set(['ConfigMapGenerator', 'SecretGenerator', 'IAMPolicyGenerator']);
const TRANSFORMERS = new Set([
  'AnnotationsTransformer',
  'HashTransformer',
  'ImageTagTransformer',
  'LabelTransformer',
  'NamespaceTransformer',
  'PatchJson6902Transformer',
  'PatchStrategicMergeTransformer',
  'PatchTransformer',
  'PrefixSuffixTransformer',
  'PrefixTransformer',
  'SuffixTransformer',
  'ReplacementTransformer',
  'ReplicaCountTransformer',
]);

/** kustomize's isBuiltinPlugin: no group and version `builtin`; anything else is an external plugin. */
function builtinKind(config: JsonObject): string {
  const kind = typeof config.kind === 'string' ? config.kind : '';
  if (config.apiVersion !== 'builtin') {
    throw new KustomizeError(
      `external plugins disabled; unable to load external plugin '${kind}' (only builtin generators and transformers run; exec and Go plugins and KRM functions are not supported)`,
    );
  }
  if (!GENERATORS.has(kind) && !TRANSFORMERS.has(kind)) {
    throw new KustomizeError(`unable to load builtin ${formatId(idOf(config))}: not supported`);
  }
  return kind;
}

export function pluginIdentity(config: JsonObject): PluginIdentity {
  const metadata = isObject(config.metadata) ? config.metadata : {};
  const id: PluginIdentity = { kind: typeof config.kind === 'string' ? config.kind : '' };
  if (typeof metadata.name === 'string' && metadata.name !== '') id.name = metadata.name;
  if (typeof metadata.namespace === 'string' && metadata.namespace !== '') id.namespace = metadata.namespace;
  return id;
}

const where = (config: JsonObject): string => `plugin ${formatId(idOf(config))} fails configuration`;

function optString(config: JsonObject, field: string): string | undefined {
  const v = config[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw new KustomizeError(`${where(config)}: ${field} must be a string`);
  return v;
}

function optStrings(config: JsonObject, field: string): string[] | undefined {
  const v = config[field];
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) {
    throw new KustomizeError(`${where(config)}: ${field} must be a list of strings`);
  }
  return v as string[];
}

function optMap(config: JsonObject, field: string): Record<string, string> {
  const v = config[field];
  if (v === undefined || v === null) return {};
  if (!isObject(v)) throw new KustomizeError(`${where(config)}: ${field} must be a mapping`);
  const out: Record<string, string> = {};
  for (const [k, x] of Object.entries(v)) out[k] = typeof x === 'string' ? x : x === null ? '' : String(x);
  return out;
}

function optObject(config: JsonObject, field: string): JsonObject | undefined {
  const v = config[field];
  if (v === undefined || v === null) return undefined;
  if (!isObject(v)) throw new KustomizeError(`${where(config)}: ${field} must be a mapping`);
  return v;
}

/** The config's `fieldSpecs`, or undefined when it has none (Go's nil slice). */
function fieldSpecs(config: JsonObject): FieldSpec[] | undefined {
  const v = config.fieldSpecs;
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) throw new KustomizeError(`${where(config)}: fieldSpecs must be a list`);
  return v.map((entry, i) => {
    if (!isObject(entry)) throw new KustomizeError(`${where(config)}: fieldSpecs[${i}] must be a mapping`);
    const spec: FieldSpec = { path: typeof entry.path === 'string' ? entry.path : '' };
    for (const key of ['group', 'version', 'kind'] as const) {
      if (typeof entry[key] === 'string' && entry[key] !== '') spec[key] = entry[key] as string;
    }
    if (entry.create === true) spec.create = true;
    return spec;
  });
}

/** ConfigMapArgs/SecretArgs read from the config; metadata.name and namespace stand in when unset. */
function generatorArgs(config: JsonObject, kind: 'ConfigMap' | 'Secret'): GeneratorArgs {
  const metadata = isObject(config.metadata) ? config.metadata : {};
  const args: GeneratorArgs = {};
  const name = optString(config, 'name') || (typeof metadata.name === 'string' ? metadata.name : '');
  const namespace =
    optString(config, 'namespace') || (typeof metadata.namespace === 'string' ? metadata.namespace : '');
  if (name) args.name = name;
  if (namespace) args.namespace = namespace;
  const behavior = optString(config, 'behavior');
  if (behavior !== undefined) args.behavior = behavior;
  const literals = optStrings(config, 'literals');
  if (literals) args.literals = literals;
  const files = optStrings(config, 'files');
  if (files) args.files = files;
  const envs = [...(optStrings(config, 'envs') ?? [])];
  const env = optString(config, 'env');
  if (env) envs.push(env);
  if (envs.length > 0) args.envs = envs;
  const options = optObject(config, 'options');
  if (options) args.options = options as GeneratorArgs['options'];
  if (kind === 'Secret') {
    const type = optString(config, 'type');
    if (type) args.type = type;
  }
  return args;
}

/** kustomize's IAMPolicyGenerator: a GKE workload-identity ServiceAccount. */
function iamPolicy(config: JsonObject): Resource {
  const cloud = optString(config, 'cloud') ?? '';
  if (cloud !== 'gke') throw new KustomizeError(`cloud provider ${cloud} not supported yet`);
  const service = optObject(config, 'kubernetesService') ?? {};
  const account = optObject(config, 'serviceAccount') ?? {};
  const text = (o: JsonObject, k: string): string => (typeof o[k] === 'string' ? (o[k] as string) : '');
  const metadata: JsonObject = {
    annotations: {
      'iam.gke.io/gcp-service-account': `${text(account, 'name')}@${text(account, 'projectId')}.iam.gserviceaccount.com`,
    },
    name: text(service, 'name'),
  };
  if (text(service, 'namespace') !== '') metadata.namespace = text(service, 'namespace');
  return { object: { apiVersion: 'v1', kind: 'ServiceAccount', metadata }, previousIds: [] };
}

/** Runs one configured generator and absorbs what it makes, as kustomize's runGenerators does. */
export function runConfiguredGenerator(
  env: PluginEnv,
  config: JsonObject,
  ra: Resource[],
  configuredIn: string | undefined,
): void {
  const kind = builtinKind(config);
  if (!GENERATORS.has(kind)) throw new KustomizeError(`plugin ${formatId(idOf(config))} not a generator`);
  let made: Resource;
  if (kind === 'IAMPolicyGenerator') made = iamPolicy(config);
  else {
    const what = kind === 'ConfigMapGenerator' ? 'ConfigMap' : 'Secret';
    made = generate(env.fs, env.dir, what, generatorArgs(config, what), undefined, env.rootOnly);
  }
  if (configuredIn !== undefined) {
    const id = pluginIdentity(config);
    made.origin = {
      path: '',
      configuredIn,
      configuredBy: kind,
      ...(id.name !== undefined ? { configuredByName: id.name } : {}),
      ...(id.namespace !== undefined ? { configuredByNamespace: id.namespace } : {}),
    };
  }
  absorb(ra, made);
}

const readText = (env: PluginEnv, path: string): string =>
  env.fs.readFile(fileInDir(env.dir, path, env.rootOnly, env.fs)).toString('utf8');
const source = (env: PluginEnv, path: string): string => fileInDir(env.dir, path, env.rootOnly, env.fs);

function selector(config: JsonObject, field: string): PatchInput['target'] | undefined {
  const t = optObject(config, field);
  if (t === undefined) return undefined;
  const out: Record<string, string> = {};
  for (const key of [
    'group',
    'version',
    'kind',
    'name',
    'namespace',
    'labelSelector',
    'annotationSelector',
  ]) {
    if (typeof t[key] === 'string') out[key] = t[key] as string;
  }
  return out;
}

function requireSpecs(config: JsonObject): FieldSpec[] {
  const specs = fieldSpecs(config);
  if (specs === undefined) throw new KustomizeError(`${where(config)}: fieldSpecs is not expected to be nil`);
  return specs;
}

/** Runs one configured transformer over the accumulated resources. */
export function runConfiguredTransformer(env: PluginEnv, config: JsonObject, ra: Resource[]): void {
  const kind = builtinKind(config);
  if (!TRANSFORMERS.has(kind)) {
    throw new KustomizeError(`plugin ${formatId(idOf(config))} not a transformer`);
  }
  const context =
    env.openapi === undefined ? { yamlLimits: env.limits } : { openapi: env.openapi, yamlLimits: env.limits };
  switch (kind) {
    case 'AnnotationsTransformer': {
      const annotations = optMap(config, 'annotations');
      if (Object.keys(annotations).length > 0) addAnnotations(ra, annotations, fieldSpecs(config) ?? []);
      return;
    }
    case 'LabelTransformer': {
      const labels = optMap(config, 'labels');
      if (Object.keys(labels).length > 0) setMapEntries(ra, labels, fieldSpecs(config) ?? []);
      return;
    }
    case 'NamespaceTransformer': {
      const metadata = isObject(config.metadata) ? config.metadata : {};
      const namespace = typeof metadata.namespace === 'string' ? metadata.namespace : '';
      const mode = optString(config, 'setRoleBindingSubjects') || 'defaultOnly';
      if (mode !== 'defaultOnly' && mode !== 'allServiceAccounts' && mode !== 'none') {
        throw new KustomizeError(
          `${where(config)}: invalid value "${mode}" for setRoleBindingSubjects: must be one of "defaultOnly", "none" or "allServiceAccounts"`,
        );
      }
      setNamespace(ra, namespace, {
        fieldSpecs: fieldSpecs(config) ?? [],
        unsetOnly: config.unsetOnly === true,
        setRoleBindingSubjects: mode as RoleBindingSubjectMode,
      });
      return;
    }
    case 'PrefixTransformer':
      addNamePrefixSuffix(ra, optString(config, 'prefix') ?? '', undefined, requireSpecs(config));
      return;
    case 'SuffixTransformer':
      addNamePrefixSuffix(ra, undefined, optString(config, 'suffix') ?? '', requireSpecs(config));
      return;
    case 'PrefixSuffixTransformer': {
      // kustomize's legacy kind: a PrefixTransformer then a SuffixTransformer, both given this config.
      const specs = requireSpecs(config);
      addNamePrefixSuffix(ra, optString(config, 'prefix') ?? '', undefined, specs);
      addNamePrefixSuffix(ra, undefined, optString(config, 'suffix') ?? '', specs);
      return;
    }
    case 'ImageTagTransformer': {
      const image = optObject(config, 'imageTag') ?? {};
      const entry: ImageOverride & { tagSuffix?: string } = {
        name: typeof image.name === 'string' ? image.name : '',
      };
      for (const key of ['newName', 'newTag', 'digest', 'tagSuffix'] as const) {
        if (typeof image[key] === 'string') entry[key] = image[key] as string;
      }
      setImages(ra, [entry], fieldSpecs(config) ?? []);
      return;
    }
    case 'ReplicaCountTransformer': {
      const replica = optObject(config, 'replica') ?? {};
      const count = replica.count ?? 0;
      if (typeof count !== 'number' || !Number.isInteger(count)) {
        throw new KustomizeError(`${where(config)}: replica.count must be an integer`);
      }
      setReplicas(
        ra,
        [{ name: typeof replica.name === 'string' ? replica.name : '', count }],
        fieldSpecs(config) ?? [],
      );
      return;
    }
    case 'PatchTransformer': {
      const patch = (optString(config, 'patch') ?? '').trim();
      const path = optString(config, 'path') ?? '';
      if (patch === '' && path === '')
        throw new KustomizeError(`${where(config)}: must specify one of patch and path`);
      if (patch !== '' && path !== '') {
        throw new KustomizeError(`${where(config)}: patch and path can't be set at the same time`);
      }
      const input: PatchInput =
        patch !== ''
          ? { patch, source: 'inline' }
          : { patch: readText(env, path), source: source(env, path) };
      const target = selector(config, 'target');
      if (target) input.target = target;
      const options = optObject(config, 'options');
      if (options) {
        input.options = {
          allowNameChange: options.allowNameChange === true,
          allowKindChange: options.allowKindChange === true,
        };
      }
      applyPatches(ra, [input], context);
      return;
    }
    case 'PatchJson6902Transformer': {
      const target = selector(config, 'target');
      if (!target?.name) throw new KustomizeError(`${where(config)}: must specify the target name`);
      const path = optString(config, 'path') ?? '';
      const jsonOp = optString(config, 'jsonOp') ?? '';
      if (path === '' && jsonOp === '')
        throw new KustomizeError(`${where(config)}: empty file path and empty jsonOp`);
      if (path !== '' && jsonOp !== '') {
        throw new KustomizeError(`${where(config)}: must specify a file path or jsonOp, not both`);
      }
      const input: PatchInput =
        path !== ''
          ? { patch: readText(env, path), source: source(env, path), target, format: 'json6902' }
          : { patch: jsonOp, source: 'inline', target, format: 'json6902' };
      applyPatches(ra, [input], context);
      return;
    }
    case 'PatchStrategicMergeTransformer': {
      const paths = optStrings(config, 'paths') ?? [];
      const patches = optString(config, 'patches') ?? '';
      if (paths.length === 0 && patches === '') {
        throw new KustomizeError(`${where(config)}: empty file path and empty patch content`);
      }
      const inputs: PatchInput[] = paths.map((p) => ({
        patch: readText(env, p),
        source: source(env, p),
        format: 'strategicMerge',
      }));
      if (patches !== '') inputs.push({ patch: patches, source: 'inline', format: 'strategicMerge' });
      applyPatches(ra, inputs, context);
      return;
    }
    case 'ReplacementTransformer': {
      const list = config.replacements;
      if (list === undefined || list === null) return;
      if (!Array.isArray(list) || list.some((r) => !isObject(r))) {
        throw new KustomizeError(`${where(config)}: replacements must be a list of mappings`);
      }
      const rs = env.readReplacements(list as JsonObject[]);
      if (rs.length > 0) applyReplacements(ra, rs);
      return;
    }
    case 'HashTransformer':
      for (const r of ra) {
        if (!r.generated?.appendHash) continue;
        const hash = hashResource(r.object);
        r.previousIds.push(idOf(r.object));
        const metadata = r.object.metadata as JsonObject;
        metadata.name = `${metadata.name as string}-${hash}`;
      }
      return;
    default:
      throw new KustomizeError(`unable to load builtin ${kind}`);
  }
}
