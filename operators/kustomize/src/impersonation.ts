import type { Kustomization } from '@mooring/api';
import type { Impersonation } from '@mooring/runtime';

/** What impersonation reads of an object: a Kustomization or a HelmRelease. */
export interface ImpersonatingObject {
  metadata: Kustomization['metadata'];
  spec: Pick<Kustomization['spec'], 'serviceAccountName' | 'kubeConfig'>;
}

/**
 * Who writes on the object's behalf: its service account, else the operator's default, else the
 * operator. The default is for this cluster only, where it bounds the operator's own rights; on a
 * cluster `spec.kubeConfig` names, the kubeconfig's credentials are the authority, and only a
 * service account the object names is impersonated there (as Flux does). No Impersonate-Group is
 * sent: the API server adds a service account's own groups, so the operator needs `impersonate`
 * on serviceaccounts only, never on groups (which would let it act as system:masters).
 */
export function impersonationFor(
  obj: ImpersonatingObject,
  fallback: string | undefined,
): Impersonation | undefined {
  const sa = obj.spec.serviceAccountName ?? (obj.spec.kubeConfig ? undefined : fallback);
  if (!sa) return undefined;
  return { user: `system:serviceaccount:${obj.metadata.namespace ?? 'default'}:${sa}` };
}
