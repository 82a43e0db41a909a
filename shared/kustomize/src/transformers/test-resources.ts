import { parseAllDocuments } from 'yaml';
import type { JsonObject, Resource } from '../resource.ts';

/** Test helper: parses YAML documents into fresh Resources with no history. */
export function resourcesFrom(text: string): Resource[] {
  return parseAllDocuments(text)
    .map((doc) => doc.toJS() as JsonObject | null)
    .filter((object): object is JsonObject => object !== null)
    .map((object) => ({ object, previousIds: [] }));
}

/** Test helper: the manifests alone, for deepStrictEqual against expected YAML. */
export function objectsOf(resources: Resource[]): JsonObject[] {
  return resources.map((r) => r.object);
}
