import { type GvkSelector, isSelected, originalId, storePreviousId } from '../res-id.ts';
import type { Resource } from '../resource.ts';
import {
  type FieldRef,
  type FieldSpec,
  NAME_PREFIX_SUFFIX_FIELD_SPECS,
  walkFieldSpec,
} from './field-specs.ts';

// kustomize hard-codes these: their names are fixed by the API (a CRD's name is plural.group).
const SKIPPED: GvkSelector[] = [
  { kind: 'CustomResourceDefinition' },
  { group: 'apiregistration.k8s.io', kind: 'APIService' },
  { kind: 'Namespace' },
];

// kustomize keeps the prefixes and suffixes a resource received in build annotations; name-reference
// fix-ups use them to break ties. The shared Resource model has no slot for them, so they live here.
const affixes = new WeakMap<Resource, { prefixes: string[]; suffixes: string[] }>();

/** The prefixes and suffixes added to a resource's name so far, oldest first. */
export function nameAffixes(resource: Resource): { prefixes: string[]; suffixes: string[] } {
  return affixes.get(resource) ?? { prefixes: [], suffixes: [] };
}

/** Carries the recorded prefixes/suffixes over to a resource that replaces another (e.g. a patched copy). */
export function copyNameAffixes(from: Resource, to: Resource): void {
  const found = affixes.get(from);
  if (found) affixes.set(to, { prefixes: [...found.prefixes], suffixes: [...found.suffixes] });
}

/** Adds namePrefix, then nameSuffix, to every resource's name (kustomize's Prefix/SuffixTransformer). */
export function addNamePrefixSuffix(
  resources: Resource[],
  prefix?: string,
  suffix?: string,
  fieldSpecs: FieldSpec[] = NAME_PREFIX_SUFFIX_FIELD_SPECS,
): void {
  if (prefix !== undefined) affix(resources, prefix, 'prefixes', fieldSpecs);
  if (suffix !== undefined) affix(resources, suffix, 'suffixes', fieldSpecs);
}

function affix(
  resources: Resource[],
  text: string,
  which: 'prefixes' | 'suffixes',
  specs: FieldSpec[],
): void {
  for (const resource of resources) {
    const orgId = originalId(resource);
    if (SKIPPED.some((selector) => isSelected(orgId, selector))) continue;
    for (const spec of specs) {
      if (!isSelected(orgId, spec)) continue;
      if (spec.path === 'metadata/name' && text !== '') {
        const record = affixes.get(resource) ?? { prefixes: [], suffixes: [] };
        record[which].push(text);
        affixes.set(resource, record);
        storePreviousId(resource);
      }
      walkFieldSpec(resource.object, spec, (ref: FieldRef) => {
        const value = ref.value;
        if (value === null || typeof value === 'object') return;
        ref.set(which === 'prefixes' ? `${text}${value}` : `${value}${text}`);
      });
    }
  }
}
