// Helm's `lookup` for a Kustomization's charts, answered by the operator from the target cluster:
// GET (a name) or LIST (no name) only, as the identity the objects are applied as (its
// serviceAccountName, else the default service account, impersonated on the target the apply
// writes to), so a chart reads nothing its Kustomization could not. The renderer asks through
// @mooring/helm's host import and never holds a credential.
import type { LookupFunction } from '@mooring/helm';
import { ApiError, type Impersonation, type KubeClient } from '@mooring/runtime';

/** A read-only lookup on `client` as `impersonate`; Helm's answers: the object, the List, or nothing. */
export function clusterLookup(client: KubeClient, impersonate: Impersonation | undefined): LookupFunction {
  return async (apiVersion, kind, namespace, name) => {
    try {
      if (name !== '') {
        return await client.get({ apiVersion, kind, namespace: namespace || undefined, name }, impersonate);
      }
      const list = await client.list(apiVersion, kind, {
        ...(namespace ? { namespace } : {}),
        ...(impersonate ? { impersonate } : {}),
      });
      return { ...list };
    } catch (err) {
      // Helm's lookup gives an empty map for a missing object and fails the render on other errors.
      if (err instanceof ApiError && err.isNotFound) return null;
      // A namespaced kind named without a namespace: helm asks cluster-wide and finds nothing.
      if (err instanceof Error && /is namespaced but no namespace was given/.test(err.message)) return null;
      throw err;
    }
  };
}
