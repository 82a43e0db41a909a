import { KustomizeError } from '../errors.ts';
import { effectiveNamespace, idOf, objectAt, originalId } from '../res-id.ts';
import type { JsonValue, Resource } from '../resource.ts';
import { matchesSelector, parseSelector } from './label-selector.ts';

/** kustomize's Selector: regexes over group/version/kind/name/namespace plus label/annotation selectors. */
export interface ResourceSelector {
  group?: string;
  version?: string;
  kind?: string;
  name?: string;
  namespace?: string;
  labelSelector?: string;
  annotationSelector?: string;
}

function anchored(pattern: string | undefined, what: string): RegExp | undefined {
  if (pattern === undefined || pattern === '') return undefined;
  try {
    // kustomize anchors every selector field as ^(?:...)$.
    return new RegExp(`^(?:${pattern})$`);
  } catch {
    throw new KustomizeError(`Selector ${what} '${pattern}' is not a valid regular expression.`);
  }
}

function stringMap(value: JsonValue | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return out;
  for (const [k, v] of Object.entries(value)) out[k] = typeof v === 'string' ? v : JSON.stringify(v);
  return out;
}

/** The resources a selector picks, in order (kustomize's ResMap.Select). */
export function selectResources(resources: Resource[], selector: ResourceSelector): Resource[] {
  const group = anchored(selector.group, 'group');
  const version = anchored(selector.version, 'version');
  const kind = anchored(selector.kind, 'kind');
  const name = anchored(selector.name, 'name');
  const namespace = anchored(selector.namespace, 'namespace');
  const labels = parseSelector(selector.labelSelector ?? '');
  const annotations = parseSelector(selector.annotationSelector ?? '');
  return resources.filter((resource) => {
    const current = idOf(resource.object);
    const original = originalId(resource);
    if (
      namespace &&
      !namespace.test(effectiveNamespace(original)) &&
      !namespace.test(effectiveNamespace(current))
    ) {
      return false;
    }
    if (name && !name.test(original.name) && !name.test(current.name)) return false;
    if (group && !group.test(current.group)) return false;
    if (version && !version.test(current.version)) return false;
    if (kind && !kind.test(current.kind)) return false;
    const metadata = objectAt(resource.object, 'metadata');
    if (!matchesSelector(labels, stringMap(metadata?.labels))) return false;
    return matchesSelector(annotations, stringMap(metadata?.annotations));
  });
}
