import { posix } from 'node:path';
import type { ConfinedFs } from './confined-fs.ts';
import { fileInDir } from './confined-fs.ts';
import { KustomizeError } from './errors.ts';
import type { GeneratorArgs, GeneratorOptions, Kustomization } from './kustomization-file.ts';
import { allIds, formatId, idOf, sameId } from './res-id.ts';
import type { JsonObject, Resource } from './resource.ts';
import { copyNameAffixes } from './transformers/name-prefix-suffix.ts';

/** kustomize's ParseFileSource: `key=path` or just `path` (key = base name). */
function parseFileSource(source: string): [string, string] {
  const separators = source.split('=').length - 1;
  if (separators === 0) return [posix.basename(source), source];
  if (separators === 1 && source.startsWith('=')) {
    throw new KustomizeError(
      `missing key name for file path ${JSON.stringify(source.slice(1))} in source ${JSON.stringify(source)}`,
    );
  }
  if (separators === 1 && source.endsWith('=')) {
    throw new KustomizeError(
      `missing file path for key name ${JSON.stringify(source.slice(0, -1))} in source ${JSON.stringify(source)}`,
    );
  }
  if (separators > 1)
    throw new KustomizeError(`source ${JSON.stringify(source)} key name or file path contains '='`);
  const [key = '', path = ''] = source.split('=');
  return [key, path];
}

/** kustomize's removeQuotes for literal values. */
function removeQuotes(s: string): string {
  if (s.length < 2 || s[0] !== s[s.length - 1]) return s;
  return s[0] === '"' || s[0] === "'" ? s.slice(1, -1) : s;
}

/** Reads key/value pairs in kustomize's order: env files, then literals, then files. Values are raw bytes. */
function loadPairs(fs: ConfinedFs, dir: string, args: GeneratorArgs, rootOnly: boolean): [string, Buffer][] {
  const pairs: [string, Buffer][] = [];
  for (const env of args.envs ?? []) {
    const lines = fs
      .readFile(fileInDir(dir, env, rootOnly, fs))
      .toString('utf8')
      .split(/\r?\n/);
    lines.forEach((raw, index) => {
      let line = index === 0 ? raw.replace(/^\uFEFF/, '') : raw;
      line = line.replace(/^\s+/, '');
      if (line === '' || line.startsWith('#')) return;
      const eq = line.indexOf('=');
      const key = eq < 0 ? line : line.slice(0, eq);
      if (key === '') return; // kustomize skips a line with nothing before '='
      pairs.push([key, Buffer.from(eq < 0 ? '' : line.slice(eq + 1), 'utf8')]);
    });
  }
  for (const literal of args.literals ?? []) {
    const eq = literal.indexOf('=');
    if (eq <= 0) throw new KustomizeError(`invalid literal source ${literal}, expected key=value`);
    pairs.push([literal.slice(0, eq), Buffer.from(removeQuotes(literal.slice(eq + 1)), 'utf8')]);
  }
  for (const source of args.files ?? []) {
    const [key, path] = parseFileSource(source);
    pairs.push([key, fs.readFile(fileInDir(dir, path, rootOnly, fs))]);
  }
  return pairs;
}

/** Go's base64 with kustomize's 70-column line breaks for long values. */
function encodeBase64(bytes: Buffer): string {
  const encoded = bytes.toString('base64');
  if (encoded.length < 70) return encoded;
  const lines: string[] = [];
  for (let i = 0; i < encoded.length; i += 70) lines.push(encoded.slice(i, i + 70));
  return `${lines.join('\n')}\n`;
}

function isUtf8(bytes: Buffer): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/** kustomize's MergeGlobalOptionsIntoLocal: local labels/annotations win, flags are ORed. */
function mergeOptions(
  local: GeneratorOptions | undefined,
  global: GeneratorOptions | undefined,
): GeneratorOptions {
  if (!global) return local ?? {};
  const merged: GeneratorOptions = { ...local };
  if (global.labels) merged.labels = { ...global.labels, ...local?.labels };
  if (global.annotations) merged.annotations = { ...global.annotations, ...local?.annotations };
  if (global.disableNameSuffixHash) merged.disableNameSuffixHash = true;
  if (global.immutable) merged.immutable = true;
  return merged;
}

/** kustomize's NewGenerationBehavior: any other word (`add`) is 'unspecified', which acts as create. */
function behaviorOf(args: GeneratorArgs): 'create' | 'merge' | 'replace' {
  const b = args.behavior ?? '';
  return b === 'merge' || b === 'replace' ? b : 'create';
}

/** Builds one ConfigMap or Secret from its generator arguments. */
export function generate(
  fs: ConfinedFs,
  dir: string,
  kind: 'ConfigMap' | 'Secret',
  args: GeneratorArgs,
  globalOptions: GeneratorOptions | undefined,
  rootOnly = true,
): Resource {
  if (!args.name)
    throw new KustomizeError(`a ${kind === 'ConfigMap' ? 'configmap' : 'secret'} generator must have a name`);
  const options = mergeOptions(args.options, globalOptions);
  const metadata: JsonObject = { name: args.name };
  if (args.namespace) metadata.namespace = args.namespace;
  const object: JsonObject = { apiVersion: 'v1', kind, metadata };
  if (kind === 'Secret') object.type = args.type || 'Opaque';
  const seen = new Set<string>();
  const data: JsonObject = {};
  const binaryData: JsonObject = {};
  for (const [key, value] of loadPairs(fs, dir, args, rootOnly)) {
    if (seen.has(key))
      throw new KustomizeError(`${kind.toLowerCase()} ${args.name} illegally repeats the key \`${key}\``);
    seen.add(key);
    if (kind === 'Secret') data[key] = encodeBase64(value);
    else if (isUtf8(value)) data[key] = value.toString('utf8');
    else binaryData[key] = encodeBase64(value);
  }
  // kustomize always creates a Secret's data map, but a ConfigMap's only when it has a text value.
  if (kind === 'Secret' || Object.keys(data).length > 0) object.data = data;
  if (Object.keys(binaryData).length > 0) object.binaryData = binaryData;
  if (options.labels && Object.keys(options.labels).length > 0) metadata.labels = { ...options.labels };
  if (options.annotations && Object.keys(options.annotations).length > 0) {
    metadata.annotations = { ...options.annotations };
  }
  if (options.immutable) object.immutable = true;
  return {
    object,
    previousIds: [],
    generated: { behavior: behaviorOf(args), appendHash: !options.disableNameSuffixHash },
  };
}

const asMap = (v: unknown): Record<string, string> =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, string>) : {};

/**
 * Adds a generated resource to the accumulated ones as kustomize's appendReplaceOrMerge does:
 * create needs a free id; merge and replace need exactly one resource with that id (current or previous).
 */
export function absorb(resources: Resource[], incoming: Resource): void {
  const id = idOf(incoming.object);
  const matches = resources.filter((r) => allIds(r).some((other) => sameId(other, id)));
  const behavior = incoming.generated?.behavior ?? 'create';
  if (matches.length === 0) {
    if (behavior !== 'create') {
      throw new KustomizeError(`id ${formatId(id)} does not exist; cannot merge or replace`);
    }
    resources.push(incoming);
    return;
  }
  if (matches.length > 1)
    throw new KustomizeError(`found multiple objects that could accept merge of ${formatId(id)}`);
  const old = matches[0] as Resource;
  if (behavior === 'create') {
    throw new KustomizeError(
      `id ${formatId(id)} exists; can not use behavior: 'create', behavior must be merge or replace`,
    );
  }
  const oldMeta = asMap(old.object.metadata);
  const meta = asMap(incoming.object.metadata) as unknown as JsonObject;
  // CopyMergeMetaDataFieldsFrom: labels and annotations merged (new wins), name and namespace from the old one.
  const labels = { ...asMap(oldMeta.labels), ...asMap(meta.labels) };
  const annotations = { ...asMap(oldMeta.annotations), ...asMap(meta.annotations) };
  if (Object.keys(labels).length > 0) meta.labels = labels;
  if (Object.keys(annotations).length > 0) meta.annotations = annotations;
  meta.name = oldMeta.name ?? '';
  if (oldMeta.namespace) meta.namespace = oldMeta.namespace;
  else delete meta.namespace;
  if (behavior === 'merge') {
    const data = { ...asMap(old.object.data), ...asMap(incoming.object.data) };
    const binaryData = { ...asMap(old.object.binaryData), ...asMap(incoming.object.binaryData) };
    if (Object.keys(data).length > 0) incoming.object.data = data;
    if (Object.keys(binaryData).length > 0) incoming.object.binaryData = binaryData;
    if (old.origin) incoming.origin = old.origin;
  }
  // The merged resource keeps the old one's identity history. kustomize carries its needs-hash build
  // annotation over from the old resource only, so the suffix is added only when both ask for it.
  incoming.previousIds = [...old.previousIds];
  // The old resource's annotations, the transformer record among them, are merged into the new one.
  if (old.transformations) incoming.transformations = [...old.transformations];
  if (incoming.generated) {
    incoming.generated = {
      ...incoming.generated,
      appendHash: incoming.generated.appendHash && old.generated?.appendHash === true,
    };
  }
  copyNameAffixes(old, incoming);
  // kustomize's copyKustomizeSpecificFields: the vars the old resource held stay with the new one.
  if (old.refVarNames) incoming.refVarNames = [...old.refVarNames];
  else delete incoming.refVarNames;
  resources[resources.indexOf(old)] = incoming;
}

/** Runs the kustomization's configMapGenerator then secretGenerator entries, absorbing each result. */
export function runGenerators(
  fs: ConfinedFs,
  dir: string,
  k: Kustomization,
  resources: Resource[],
  rootOnly = true,
): void {
  for (const args of k.configMapGenerator ?? []) {
    const r = generate(fs, dir, 'ConfigMap', args, k.generatorOptions, rootOnly);
    r.origin = { path: '', configuredIn: k.fileName, configuredBy: 'ConfigMapGenerator' };
    absorb(resources, r);
  }
  for (const args of k.secretGenerator ?? []) {
    const r = generate(fs, dir, 'Secret', args, k.generatorOptions, rootOnly);
    r.origin = { path: '', configuredIn: k.fileName, configuredBy: 'SecretGenerator' };
    absorb(resources, r);
  }
}
