import { KustomizeError } from '../errors.ts';
import type { Resource } from '../resource.ts';
import { defaultConfig, mergeAllFieldSpecs, mergeOneFieldSpec, type TransformerConfig } from './config.ts';
import { type FieldRef, type FieldSpec, walkFieldSpec } from './field-specs.ts';

/** How a `labels:` entry (or commonLabels) spreads: kustomize's Label options. */
export interface LabelOptions {
  includeSelectors: boolean;
  includeTemplates: boolean;
  /** Extra field specs; the defaults for the chosen options are appended. */
  fields?: FieldSpec[];
  /** The transformer configuration whose label field specs apply (kustomize's defaults without one). */
  config?: TransformerConfig;
}

/** The field specs kustomize uses for a `labels:` entry with these options. */
export function labelFieldSpecs(options: LabelOptions): FieldSpec[] {
  const config = options.config ?? defaultConfig();
  try {
    // The `labels` specs of the transformer configuration apply to every entry.
    const custom = mergeAllFieldSpecs(options.fields ?? [], config.labels);
    if (options.includeSelectors) return mergeAllFieldSpecs(custom, config.commonLabels);
    const withTemplates = options.includeTemplates
      ? mergeAllFieldSpecs(custom, config.templateLabels)
      : custom;
    return mergeOneFieldSpec(withTemplates, { path: 'metadata/labels', create: true });
  } catch (error) {
    throw new KustomizeError(
      `failed to merge labels: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

/** Adds labels to every resource; commonLabels is `includeSelectors: true`. */
export function addLabels(
  resources: Resource[],
  labels: Record<string, string>,
  options: LabelOptions,
): void {
  setMapEntries(resources, labels, labelFieldSpecs(options));
}

/** Writes each key/value, in sorted key order, into the map every field spec reaches (creating maps as allowed). */
export function setMapEntries(
  resources: Resource[],
  entries: Record<string, string>,
  specs: FieldSpec[],
): void {
  const keys = Object.keys(entries).sort();
  if (keys.length === 0) return;
  for (const resource of resources) {
    for (const key of keys) {
      const value = entries[key] ?? '';
      for (const spec of specs) {
        walkFieldSpec(
          resource.object,
          spec,
          (ref: FieldRef) => {
            const target = ref.value;
            if (target === null) return;
            if (typeof target !== 'object' || Array.isArray(target)) {
              throw new KustomizeError(`expected a map at '${spec.path}' to set '${key}' in`);
            }
            target[key] = value;
          },
          'map',
        );
      }
    }
  }
}
