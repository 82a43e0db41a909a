import { KustomizeError } from '../errors.ts';
import {
  effectiveNamespace,
  formatId,
  type GvkSelector,
  idIsClusterScoped,
  idOf,
  isObject,
  isSelected,
  originalId,
  str,
} from '../res-id.ts';
import type { JsonObject, ResId, Resource } from '../resource.ts';
import { type FieldRef, type FieldSpec, walkFieldSpec } from './field-specs.ts';
import { nameAffixes } from './name-prefix-suffix.ts';
import { NAME_REFERENCE_TABLE, type NameBackReference } from './name-reference-table.ts';

/**
 * Rewrites every reference to a renamed resource (kustomize's nameReference transformer): a field
 * holding a name some resource had before (previousIds) now holds that resource's current name.
 */
export function fixNameReferences(
  resources: Resource[],
  table: NameBackReference[] = NAME_REFERENCE_TABLE,
): void {
  const index = new ReferralIndex(resources);
  const work = new Map<Resource, { spec: FieldSpec; target: GvkSelector }[]>();
  // Referrer specs almost always name a kind: look resources up by their original kind first.
  const byKind = new Map<string, { resource: Resource; orgId: ResId }[]>();
  const all: { resource: Resource; orgId: ResId }[] = [];
  for (const resource of resources) {
    const entry = { resource, orgId: originalId(resource) };
    all.push(entry);
    const list = byKind.get(entry.orgId.kind) ?? [];
    list.push(entry);
    byKind.set(entry.orgId.kind, list);
  }
  for (const backRef of table) {
    for (const spec of backRef.referrers) {
      const pool = spec.kind ? (byKind.get(spec.kind) ?? []) : all;
      for (const { resource, orgId } of pool) {
        if (!isSelected(orgId, spec)) continue;
        const list = work.get(resource) ?? [];
        list.push({ spec, target: backRef.target });
        work.set(resource, list);
      }
    }
  }
  for (const [referrer, filters] of work) {
    const reachable = index.reachableFrom(referrer);
    for (const { spec, target } of filters) {
      const fixer = new ReferenceFixer(referrer, spec, target, reachable, index);
      try {
        // The referrer's own current GVK: only the path of the spec matters from here on.
        walkFieldSpec(referrer.object, { path: spec.path }, (ref) => fixer.set(ref));
      } catch (error) {
        const why = error instanceof Error ? error.message : String(error);
        throw new KustomizeError(
          `updating name reference in '${spec.path}' field of '${formatId(idOf(referrer.object))}': ${why}`,
        );
      }
    }
  }
}

/**
 * Lookups over the resources that stay valid for the whole pass: fixing references never changes a
 * resource's own name, namespace or kind, so ids and the previous-name index are computed once.
 */
class ReferralIndex {
  readonly currentIds = new Map<Resource, ResId>();
  readonly byPreviousName = new Map<string, Resource[]>();
  readonly byOriginalNamespace = new Map<string, Resource[]>();
  readonly position = new Map<Resource, number>();

  constructor(resources: Resource[]) {
    resources.forEach((r, i) => {
      this.position.set(r, i);
      this.currentIds.set(r, idOf(r.object));
      for (const name of new Set(r.previousIds.map((id) => id.name))) {
        const list = this.byPreviousName.get(name) ?? [];
        list.push(r);
        this.byPreviousName.set(name, list);
      }
      const org = originalId(r);
      if (!idIsClusterScoped(org)) {
        const ns = effectiveNamespace(org);
        const list = this.byOriginalNamespace.get(ns) ?? [];
        list.push(r);
        this.byOriginalNamespace.set(ns, list);
      }
    });
  }

  id(resource: Resource): ResId {
    return this.currentIds.get(resource) ?? idOf(resource.object);
  }

  /** kustomize's SubsetThatCouldBeReferencedByResource, as a predicate. */
  reachableFrom(referrer: Resource): (r: Resource) => boolean {
    const referrerId = this.id(referrer);
    if (idIsClusterScoped(referrerId)) return () => true;
    const referrerNs = effectiveNamespace(referrerId);
    const bindingNamespaces = new Set<string>();
    if (referrerId.kind === 'RoleBinding' && Array.isArray(referrer.object.subjects)) {
      for (const subject of referrer.object.subjects) {
        if (!isObject(subject) || subject.kind !== 'ServiceAccount' || !Object.hasOwn(subject, 'namespace')) {
          continue;
        }
        // kustomize's getNamespacesForRoleBinding: a ServiceAccount subject's namespace, when present, must be a string.
        if (typeof subject.namespace !== 'string') {
          throw new KustomizeError(
            `Invalid Input: namespace is blank for resource ${JSON.stringify(formatId(referrerId))}`,
          );
        }
        bindingNamespaces.add(subject.namespace);
      }
    }
    return (r) => {
      const id = this.id(r);
      if (idIsClusterScoped(id)) return true;
      if (effectiveNamespace(id) === referrerNs) return true;
      return bindingNamespaces.has(id.namespace);
    };
  }
}

class ReferenceFixer {
  readonly referrer: Resource;
  readonly spec: FieldSpec;
  readonly target: GvkSelector;
  readonly reachable: (r: Resource) => boolean;
  readonly index: ReferralIndex;

  constructor(
    referrer: Resource,
    spec: FieldSpec,
    target: GvkSelector,
    reachable: (r: Resource) => boolean,
    index: ReferralIndex,
  ) {
    this.referrer = referrer;
    this.spec = spec;
    this.target = target;
    this.reachable = reachable;
    this.index = index;
  }

  set(ref: FieldRef): void {
    const value = ref.value;
    if (value === null) return;
    if (Array.isArray(value)) {
      value.forEach((item, i) => {
        const elementRef: FieldRef = {
          get value() {
            return value[i] ?? null;
          },
          set(next) {
            value[i] = next;
          },
        };
        if (isObject(item)) this.setMapping(item);
        else if (item !== null && typeof item !== 'object') this.setScalar(elementRef);
        else if (item !== null) throw new KustomizeError('a name reference list must hold strings or maps');
      });
    } else if (isObject(value)) this.setMapping(value);
    else this.setScalar(ref);
  }

  private setScalar(ref: FieldRef): void {
    const oldName = String(ref.value);
    const referral = this.select(oldName, this.reachable, (list) =>
      sameAll(list, (r) => this.index.id(r).name),
    );
    if (referral === undefined) return;
    const name = this.index.id(referral).name;
    if (name !== oldName) ref.set(name);
  }

  private setMapping(node: JsonObject): void {
    if (!Object.hasOwn(node, 'name')) throw new KustomizeError("path config error; no 'name' field in node");
    const oldName = scalarText(node.name);
    const referral = this.select(oldName, this.mapCandidates(node), (list) =>
      sameAll(list, (r) => {
        const id = this.index.id(r);
        return `${id.name}\u0000${id.namespace}`;
      }),
    );
    if (referral === undefined) return;
    const id = this.index.id(referral);
    if (id.name === oldName && id.namespace === '') return;
    node.name = id.name;
    // An empty namespace is a wildcard here, not `default`: never write it.
    if (id.namespace !== '') node.namespace = id.namespace;
  }

  /** kustomize's filterMapCandidatesByNamespace: the original namespace wins when any candidate had it. */
  private mapCandidates(node: JsonObject): (r: Resource) => boolean {
    if (!Object.hasOwn(node, 'namespace')) return this.reachable;
    const namespace = scalarText(node.namespace);
    const hadIt = this.index.byOriginalNamespace.get(namespace)?.some(this.reachable) === true;
    if (hadIt) {
      return (r) => {
        const id = originalId(r);
        return this.reachable(r) && !idIsClusterScoped(id) && effectiveNamespace(id) === namespace;
      };
    }
    return (r) => {
      const id = this.index.id(r);
      return this.reachable(r) && !idIsClusterScoped(id) && effectiveNamespace(id) === namespace;
    };
  }

  private select(
    oldName: string,
    candidate: (r: Resource) => boolean,
    identical: (list: Resource[]) => boolean,
  ): Resource | undefined {
    // Only resources that once had this name can be the referral; the index keeps build order.
    let list = (this.index.byPreviousName.get(oldName) ?? []).filter(candidate);
    list = list.filter((r) => r.previousIds.some((id) => isSelected(id, this.target)));
    const roleRef = this.roleRefGvk();
    if (roleRef) list = list.filter((r) => r.previousIds.some((id) => isSelected(id, roleRef)));
    list = list.filter(this.sameNamespaceAsReferrer());
    if (list.length === 1) return list[0];
    const mine = nameAffixes(this.referrer);
    // PrefixesSuffixesEquals: first letting an empty list on either side match anything, then strictly.
    const affixesMatch = (allowEmpty: boolean) => (r: Resource) => {
      const theirs = nameAffixes(r);
      const same = (a: string[], b: string[]): boolean =>
        (allowEmpty && (a.length === 0 || b.length === 0)) || sameEnding(a, b);
      return same(mine.prefixes, theirs.prefixes) && same(mine.suffixes, theirs.suffixes);
    };
    list = list.filter(affixesMatch(true));
    if (list.length > 1) list = list.filter(affixesMatch(false));
    if (list.length <= 1) return list[0];
    if (identical(list)) return list[0];
    const ids = list.map((r) => formatId(this.index.id(r))).join(', ');
    throw new KustomizeError(`found multiple possible referrals: ${ids}`);
  }

  private roleRefGvk(): GvkSelector | undefined {
    if (!this.spec.path.endsWith('roleRef/name')) return undefined;
    const roleRef = this.referrer.object.roleRef;
    if (!isObject(roleRef) || !Object.hasOwn(roleRef, 'apiGroup') || !Object.hasOwn(roleRef, 'kind')) {
      return undefined;
    }
    return { group: str(roleRef.apiGroup), kind: str(roleRef.kind) };
  }

  private sameNamespaceAsReferrer(): (r: Resource) => boolean {
    const referrerId = this.index.id(this.referrer);
    if (idIsClusterScoped(referrerId)) return () => true;
    return (r) => {
      const id = this.index.id(r);
      if (idIsClusterScoped(id)) return true;
      // A RoleBinding may name a ServiceAccount of any namespace.
      if (id.kind === 'ServiceAccount') return true;
      return effectiveNamespace(id) === effectiveNamespace(referrerId);
    };
  }
}

function scalarText(value: unknown): string {
  return value === null || value === undefined ? '' : typeof value === 'object' ? '' : String(value);
}

function sameAll(list: Resource[], key: (r: Resource) => string): boolean {
  const first = list[0];
  if (first === undefined) return true;
  const k = key(first);
  return list.every((r) => key(r) === k);
}

/** kustomize's SameEndingSubarray: the shorter list is the tail of the longer one. */
function sameEnding(a: string[], b: string[]): boolean {
  const [shortest, longest] = a.length <= b.length ? [a, b] : [b, a];
  const diff = longest.length - shortest.length;
  if (shortest.length === 0) return diff === 0;
  return shortest.every((value, i) => longest[i + diff] === value);
}
