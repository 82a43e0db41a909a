import { KustomizeError } from '../errors.ts';
import {
  effectiveNamespace,
  formatId,
  idIsClusterScoped,
  idOf,
  isObject,
  storePreviousId,
} from '../res-id.ts';
import type { JsonObject, ResId, Resource } from '../resource.ts';
import { type FieldRef, type FieldSpec, NAMESPACE_FIELD_SPECS, walkFieldSpec } from './field-specs.ts';

/** kustomize's `setRoleBindingSubjects`: which binding subjects get the namespace. */
export type RoleBindingSubjectMode = 'defaultOnly' | 'allServiceAccounts' | 'none';

/** Options of kustomize's NamespaceTransformer beyond the namespace itself. */
export interface NamespaceOptions {
  /** Only fill namespace fields that are empty (kustomize's `unsetOnly`). */
  unsetOnly?: boolean;
  /** Defaults to `defaultOnly`: only subjects named `default` get the namespace. */
  setRoleBindingSubjects?: RoleBindingSubjectMode;
  fieldSpecs?: FieldSpec[];
}

/** Sets the namespace of every namespaced resource and of the fields that carry one. */
export function setNamespace(resources: Resource[], namespace: string, options: NamespaceOptions = {}): void {
  if (namespace === '') return;
  const specs = (options.fieldSpecs ?? NAMESPACE_FIELD_SPECS).filter((s) => s.path !== 'metadata/namespace');
  const setter = (ref: FieldRef): void => {
    if (typeof ref.value === 'object' && ref.value !== null) {
      throw new KustomizeError('namespace field specs must target scalar nodes');
    }
    if (options.unsetOnly && ref.value !== '' && ref.value !== null) return;
    ref.set(namespace);
  };
  for (const resource of resources) {
    const object = resource.object;
    if (Object.keys(object).length === 0) continue;
    // kustomize's NamespaceTransformer skips what helmCharts made: "Helm should take care of it".
    if (resource.helmGenerated) continue;
    storePreviousId(resource);
    const id = idOf(object);
    if (!idIsClusterScoped(id)) {
      walkFieldSpec(object, { path: 'metadata/namespace', create: true }, setter, 'scalar');
    }
    // removeUnneededMetaFieldSpecs: metadata/name specs apply only to an object of apiVersion v1, so a
    // custom kind named Namespace in another group keeps its name.
    let own = object.apiVersion === 'v1' ? specs : specs.filter((s) => s.path !== 'metadata/name');
    if (id.kind === 'RoleBinding' || id.kind === 'ClusterRoleBinding') {
      // Binding subjects have their own rule below, whatever the field specs say.
      own = specs.filter((s) => !(isBindingKind(s.kind) && s.path.startsWith('subjects')));
      setSubjects(object, options.setRoleBindingSubjects ?? 'defaultOnly', setter);
    }
    for (const spec of own) walkFieldSpec(object, spec, setter, 'scalar');
  }
  // kustomize checks after each resource that its new id is unique; a clash seen midway always
  // survives to the end (every resource ends in the same namespace), so one pass at the end suffices.
  const seen = new Map<string, ResId>();
  for (const resource of resources) {
    if (Object.keys(resource.object).length === 0) continue;
    const id = idOf(resource.object);
    const key = [id.group, id.version, id.kind, id.name, effectiveNamespace(id)].join('\u0000');
    const other = seen.get(key);
    if (other) {
      throw new KustomizeError(
        `namespace transformation produces ID conflict: ${formatId(other)} and ${formatId(id)} are now the same resource`,
      );
    }
    seen.set(key, id);
  }
}

function isBindingKind(kind: string | undefined): boolean {
  return kind === 'RoleBinding' || kind === 'ClusterRoleBinding';
}

function setSubjects(
  object: JsonObject,
  mode: RoleBindingSubjectMode,
  setter: (ref: FieldRef) => void,
): void {
  const subjects = object.subjects;
  if (mode === 'none' || !Array.isArray(subjects)) return;
  for (const subject of subjects) {
    if (!isObject(subject)) continue;
    const wanted = mode === 'defaultOnly' ? subject.name === 'default' : subject.kind === 'ServiceAccount';
    if (!wanted) continue;
    if (!Object.hasOwn(subject, 'namespace')) subject.namespace = '';
    setter({
      get value() {
        return subject.namespace ?? null;
      },
      set(value) {
        subject.namespace = value;
      },
    });
  }
}
