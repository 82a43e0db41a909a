import { KustomizeError } from '../errors.ts';
import type { Resource } from '../resource.ts';
import {
  COMMON_LABELS_FIELD_SPECS,
  type FieldRef,
  type FieldSpec,
  mergeFieldSpecs,
  TEMPLATE_LABELS_FIELD_SPECS,
  walkFieldSpec,
} from './field-specs.ts';

/** How a `labels:` entry (or commonLabels) spreads: kustomize's Label options. */
export interface LabelOptions {
  includeSelectors: boolean;
  includeTemplates: boolean;
  /** Extra field specs; the defaults for the chosen options are appended. */
  fields?: FieldSpec[];
}

/** The field specs kustomize uses for a `labels:` entry with these options. */
export function labelFieldSpecs(options: LabelOptions): FieldSpec[] {
  const custom = options.fields ?? [];
  if (options.includeSelectors) return mergeFieldSpecs(custom, COMMON_LABELS_FIELD_SPECS);
  const withMeta = mergeFieldSpecs(custom, [{ path: 'metadata/labels', create: true }]);
  return options.includeTemplates ? mergeFieldSpecs(withMeta, TEMPLATE_LABELS_FIELD_SPECS) : withMeta;
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
