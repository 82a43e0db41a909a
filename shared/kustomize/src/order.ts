import { compareUtf8 } from './hash.ts';
import { idOf } from './res-id.ts';
import type { ResId, Resource } from './resource.ts';

/** kustomize's default legacy order (kyaml resid/gvk.go and SortOrderTransformer). */
export const defaultOrderFirst = [
  'Namespace',
  'ResourceQuota',
  'StorageClass',
  'CustomResourceDefinition',
  'ServiceAccount',
  'PodSecurityPolicy',
  'Role',
  'ClusterRole',
  'RoleBinding',
  'ClusterRoleBinding',
  'ConfigMap',
  'Secret',
  'Endpoints',
  'Service',
  'LimitRange',
  'PriorityClass',
  'PersistentVolume',
  'PersistentVolumeClaim',
  'Deployment',
  'StatefulSet',
  'CronJob',
  'PodDisruptionBudget',
];
export const defaultOrderLast = ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration'];

const gvkSortString = (id: ResId): string => `${id.group || '~G'}_${id.version || '~V'}_${id.kind || '~K'}`;
const idSortString = (id: ResId): string =>
  `${id.kind || '[noKind]'}.${id.version || '[noVer]'}.${id.group || '[noGrp]'}|${id.namespace || '~X'}|${id.name || '~N'}`;

/** Sorts resources in kustomize's legacy order: orderFirst kinds, then others by GVK, then orderLast kinds. */
export function legacySort(
  resources: Resource[],
  orderFirst: string[] = defaultOrderFirst,
  orderLast: string[] = defaultOrderLast,
): Resource[] {
  const typeOrders = new Map<string, number>();
  orderFirst.forEach((kind, i) => {
    typeOrders.set(kind, -orderFirst.length + i);
  });
  orderLast.forEach((kind, i) => {
    typeOrders.set(kind, 1 + i);
  });
  const keyed = resources.map((resource) => {
    const id = idOf(resource.object);
    return {
      resource,
      id,
      rank: typeOrders.get(id.kind) ?? 0,
      gvk: gvkSortString(id),
      ids: idSortString(id),
    };
  });
  keyed.sort((a, b) => {
    const sameGvk = a.id.group === b.id.group && a.id.version === b.id.version && a.id.kind === b.id.kind;
    if (!sameGvk) {
      if (a.rank !== b.rank) return a.rank - b.rank;
      // kustomize compares Namespace GVKs in reverse when one is core, which puts the core Namespace first.
      if (
        a.id.kind === 'Namespace' &&
        b.id.kind === 'Namespace' &&
        (a.id.group === '' || b.id.group === '')
      ) {
        return compareUtf8(b.gvk, a.gvk);
      }
      return compareUtf8(a.gvk, b.gvk);
    }
    return compareUtf8(a.ids, b.ids);
  });
  return keyed.map((k) => k.resource);
}
