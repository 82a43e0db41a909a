import type { Manifest } from './object-policy.ts';

/**
 * Flux's apply stages: what other objects need first (CRDs, Namespaces, ClusterRoles), then the
 * classes (StorageClass, IngressClass, ...), then everything else.
 */
export function applyStage(obj: Manifest): 0 | 1 | 2 {
  const group = obj.apiVersion.includes('/') ? obj.apiVersion.split('/')[0] : '';
  if (obj.kind === 'CustomResourceDefinition' && group === 'apiextensions.k8s.io') return 0;
  if (obj.kind === 'Namespace' && group === '') return 0;
  if (obj.kind === 'ClusterRole' && group === 'rbac.authorization.k8s.io') return 0;
  if (obj.kind.endsWith('Class')) return 1;
  return 2;
}

/** The objects split by stage, each stage keeping the render order. */
export function byStage(objects: Manifest[]): Manifest[][] {
  const stages: Manifest[][] = [[], [], []];
  for (const obj of objects) stages[applyStage(obj)]!.push(obj);
  return stages;
}
