import type { KubeClient } from '@mooring/runtime';

const ATTEMPTS = 20;

/**
 * Removes a bench namespace from a control plane that runs no kube-controller-manager, where
 * nothing empties a deleted namespace: each collection (`/api/v1/namespaces/<ns>/configmaps`, ...)
 * is deleted until it is empty, then the namespace, then its own finalizer. Without this every
 * run would leave its objects in etcd. Best effort: a failure is reported, not thrown.
 */
export async function removeNamespace(
  client: KubeClient,
  namespace: string,
  collections: string[],
): Promise<void> {
  for (const path of collections) {
    // The API server gives a collection delete 60 s; 50,000 objects take longer, and it goes on
    // from where it stopped when asked again.
    for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
      await client.request({ method: 'DELETE', path }).catch(() => undefined);
      const left = await client
        .request<{ items: unknown[] }>({ method: 'GET', path, query: { limit: 1 } })
        .catch(() => ({ items: [] }));
      if (!left.items.length) break;
      if (attempt === ATTEMPTS) process.stderr.write(`removing ${namespace}: ${path} still holds objects\n`);
    }
  }
  await client.delete({ apiVersion: 'v1', kind: 'Namespace', name: namespace }).catch(() => undefined);
  await client
    .request({
      method: 'PUT',
      path: `/api/v1/namespaces/${namespace}/finalize`,
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace }, spec: { finalizers: [] } },
    })
    .catch(() => undefined);
}
