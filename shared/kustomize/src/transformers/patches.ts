import { KustomizeError } from '../errors.ts';
import { parseYamlDocuments, type YamlLimits } from '../load-resources.ts';
import { formatId, idOf, isObject, objectAt, sameId, storePreviousId, str } from '../res-id.ts';
import type { JsonObject, JsonValue, Resource } from '../resource.ts';
import { applyJson6902 } from '../smp/json-patch.ts';
import { type OpenApiDocument, schemaFor } from '../smp/schema.ts';
import { strategicMerge } from '../smp/strategic-merge.ts';
import { type ResourceSelector, selectResources } from './select.ts';

/** A patch's `target`: kustomize's Selector. */
export type PatchTarget = ResourceSelector;

/** One patch to apply, with its text already read by the engine. */
export interface PatchInput {
  /** YAML or JSON text: strategic merge document(s) or a JSON 6902 operation list. */
  patch: string;
  target?: PatchTarget;
  options?: { allowNameChange?: boolean; allowKindChange?: boolean };
  /** The file the patch came from, or 'inline', for messages. */
  source: string;
  /**
   * How to read the text. `auto` (the default, kustomize's `patches:`) decides by content;
   * `patchesStrategicMerge` and `patchesJson6902` entries force their format.
   */
  format?: 'auto' | 'strategicMerge' | 'json6902';
}

/** Applies patches in order, as kustomize's PatchTransformer does; resources may be replaced or removed. */
export function applyPatches(
  resources: Resource[],
  patches: PatchInput[],
  context: { openapi?: OpenApiDocument; yamlLimits?: YamlLimits },
): void {
  for (const input of patches) {
    const parsed = parsePatch(input, context.yamlLimits);
    if (parsed.type === 'json6902') applyJsonPatch(resources, input, parsed.operations);
    else applyStrategicPatches(resources, input, parsed.documents, context.openapi);
  }
}

type ParsedPatch =
  | { type: 'json6902'; operations: JsonValue[] }
  | { type: 'strategicMerge'; documents: JsonObject[] };

function describe(input: PatchInput): string {
  return input.source === 'inline' ? 'an inline patch' : `patch ${input.source}`;
}

/** Decides SMP vs JSON 6902 as kustomize does: a list of operations is JSON 6902, maps are SMP. */
function parsePatch(input: PatchInput, limits: YamlLimits | undefined): ParsedPatch {
  const text = input.patch;
  let docs: JsonValue[];
  try {
    // kustomize loads a patch with a target, and a patchesStrategicMerge file, as a resource.
    const asResource = input.target !== undefined || input.format === 'strategicMerge';
    const annotationText = asResource ? 'patch-as-resource' : 'patch';
    docs = parseYamlDocuments(text, input.source, limits, annotationText).filter((d) => d !== null);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new KustomizeError(`unable to parse SM or JSON patch from ${describe(input)}: ${why}`);
  }
  const format = input.format ?? 'auto';
  const first = docs[0];
  const isOps = Array.isArray(first) && first.every(isObject);
  const patches =
    docs.length > 0 && docs.every(isObject) ? asPatchResources(docs as JsonObject[]) : undefined;
  const smpOk = patches !== undefined && typeof patches !== 'string';
  if (format !== 'strategicMerge' && isOps && !smpOk) {
    return { type: 'json6902', operations: json6902Operations(input, limits) };
  }
  if (format !== 'json6902' && smpOk) return { type: 'strategicMerge', documents: patches };
  if (format === 'json6902') {
    throw new KustomizeError(`${describe(input)} is not a JSON 6902 patch: expected a list of operations`);
  }
  if (format === 'strategicMerge') {
    const why = typeof patches === 'string' ? patches : 'expected one or more maps';
    throw new KustomizeError(`${describe(input)} is not a strategic merge patch: ${why}`);
  }
  throw new KustomizeError(`unable to parse SM or JSON patch from ${describe(input)}`);
}

/**
 * kustomize reads a JSON 6902 patch through sigs.k8s.io/yaml, which is YAML 1.1: `value: y` or `on` is
 * a boolean there, not the string the core schema makes of it. So the operations are parsed again.
 */
function json6902Operations(input: PatchInput, limits: YamlLimits | undefined): JsonValue[] {
  const [operations] = parseYamlDocuments(input.patch, input.source, limits, false, 'yaml-1.1').filter(
    (d) => d !== null,
  );
  if (!Array.isArray(operations)) {
    throw new KustomizeError(`${describe(input)} is not a JSON 6902 patch: expected a list of operations`);
  }
  return operations;
}

/**
 * kustomize loads strategic merge patches as resources: every document needs a kind and (unless it is
 * a *List) a name, and a *List with `items` stands for its items (queued after the other documents).
 * Returns the reason as a string when the documents are not loadable resources.
 */
function asPatchResources(docs: JsonObject[]): JsonObject[] | string {
  const queue = docs.filter((d) => Object.keys(d).length > 0);
  for (const doc of queue) {
    const kind = str(doc.kind);
    if (kind === '') return 'a document has no kind';
    if (!kind.endsWith('List') && str(objectAt(doc, 'metadata')?.name) === '') {
      return `a ${kind} document has no metadata.name`;
    }
  }
  const out: JsonObject[] = [];
  while (queue.length > 0) {
    const doc = queue.shift() as JsonObject;
    const kind = str(doc.kind);
    if (!kind.endsWith('List') || !Object.hasOwn(doc, 'items')) {
      out.push(doc);
      continue;
    }
    const items = doc.items;
    if (items === null) continue;
    if (!Array.isArray(items) || !items.every(isObject)) return `${kind}/items must be a list of objects`;
    queue.push(...items);
  }
  return out;
}

function applyJsonPatch(resources: Resource[], input: PatchInput, operations: JsonValue[]): void {
  if (input.target === undefined) {
    throw new KustomizeError(`must specify a target for JSON patch ${describe(input)}`);
  }
  if (input.format === 'json6902' && !input.target.name) {
    throw new KustomizeError(`${describe(input)}: a patchesJson6902 target must name its resource`);
  }
  for (const resource of selectResources(resources, input.target)) {
    if (input.format !== 'json6902') storePreviousId(resource);
    let result: JsonValue;
    try {
      result = applyJson6902(resource.object, operations);
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      throw new KustomizeError(`${describe(input)} failed on ${formatId(idOf(resource.object))}: ${why}`);
    }
    if (!isObject(result)) {
      throw new KustomizeError(
        `${describe(input)} turned ${formatId(idOf(resource.object))} into a non-object`,
      );
    }
    resource.object = result;
  }
}

function applyStrategicPatches(
  resources: Resource[],
  input: PatchInput,
  documents: JsonObject[],
  openapi: OpenApiDocument | undefined,
): void {
  const options = input.options ?? {};
  if (input.target !== undefined) {
    if (documents.length > 1) {
      throw new KustomizeError(
        `Multiple Strategic-Merge Patches in one \`patches\` entry is not allowed to set \`patches.target\` field: ${describe(input)}`,
      );
    }
    const patch = documents[0];
    if (patch === undefined) return;
    for (const resource of selectResources(resources, input.target)) {
      // kustomize gives the patch the target's apiVersion, keeping the patch's own kind.
      const copy: JsonObject = {
        ...patch,
        apiVersion: resource.object.apiVersion ?? '',
        kind: patch.kind ?? '',
      };
      mergeInto(resources, resource, copy, options, openapi, input);
    }
    return;
  }
  for (const patch of documents) {
    const patchId = idOf(patch);
    const matches = resources.filter((r) =>
      [idOf(r.object), ...r.previousIds].some((id) => sameId(id, patchId)),
    );
    if (matches.length !== 1) {
      const how = matches.length === 0 ? 'no matches' : 'multiple matches';
      throw new KustomizeError(
        `no resource matches strategic merge patch "${formatId(patchId)}": ${how} for Id ${formatId(patchId)}; failed to find unique target for patch ${formatId(patchId)}`,
      );
    }
    const target = matches[0];
    if (target) mergeInto(resources, target, patch, options, openapi, input);
  }
}

function mergeInto(
  resources: Resource[],
  resource: Resource,
  patch: JsonObject,
  options: { allowNameChange?: boolean; allowKindChange?: boolean },
  openapi: OpenApiDocument | undefined,
  input: PatchInput,
): void {
  const before = idOf(resource.object);
  if (options.allowNameChange || options.allowKindChange) storePreviousId(resource);
  const schema = schemaFor(str(resource.object.apiVersion), before.kind, openapi);
  let merged: JsonObject | null;
  try {
    merged = strategicMerge(resource.object, patch, schema, openapi === undefined ? {} : { openapi });
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new KustomizeError(`${describe(input)} failed on ${formatId(before)}: ${why}`);
  }
  if (merged === null || Object.keys(merged).length === 0) {
    // `$patch: delete` of the whole resource: the build output shrinks by one.
    const index = resources.indexOf(resource);
    if (index >= 0) resources.splice(index, 1);
    return;
  }
  if (!options.allowKindChange) merged.kind = before.kind;
  const metadata = objectAt(merged, 'metadata') ?? {};
  merged.metadata = metadata;
  if (!options.allowNameChange) metadata.name = before.name;
  if (before.namespace === '') delete metadata.namespace;
  else metadata.namespace = before.namespace;
  resource.object = merged;
}
