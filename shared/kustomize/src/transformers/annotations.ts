import type { Resource } from '../resource.ts';
import { COMMON_ANNOTATIONS_FIELD_SPECS, type FieldSpec } from './field-specs.ts';
import { setMapEntries } from './labels.ts';

/** Adds commonAnnotations to every resource's metadata and pod templates. */
export function addAnnotations(
  resources: Resource[],
  annotations: Record<string, string>,
  fieldSpecs: FieldSpec[] = COMMON_ANNOTATIONS_FIELD_SPECS,
): void {
  setMapEntries(resources, annotations, fieldSpecs);
}
