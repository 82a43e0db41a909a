import type { KubeClient, KubeObject } from '@mooring/runtime';
import { CliError } from './cli-error.ts';

interface Condition {
  type: string;
  status: string;
  message?: string;
}

/** Why a terminating object is still there, from the conditions its deleting controller writes. */
function stillThereBecause(obj: KubeObject): string | undefined {
  const conditions = (obj.status as { conditions?: Condition[] } | undefined)?.conditions ?? [];
  // Namespaces: NamespaceContentRemaining, NamespaceFinalizersRemaining, NamespaceDeletion*Failure;
  // CRDs: InstanceDeletionInProgress, Terminating.
  const telling = conditions.filter(
    (c) => c.status === 'True' && c.message && c.type !== 'Established' && c.type !== 'NamesAccepted',
  );
  return telling.length ? telling.map((c) => c.message!.replace(/\s+/g, ' ')).join('; ') : undefined;
}

const describe = (obj: KubeObject): string =>
  obj.kind === 'Namespace' ? `namespace ${obj.metadata.name}` : `${obj.kind} ${obj.metadata.name}`;

/**
 * Waits until every object in `objects` (cluster-scoped: Namespaces, CRDs) is gone, as
 * `flux uninstall` does, so that an install right after does not meet a terminating namespace.
 * Reads them again 100 ms after the delete, then ever less often, up to every 2 s.
 */
export async function waitForRemoval(
  client: KubeClient,
  objects: KubeObject[],
  timeoutMs: number,
): Promise<void> {
  if (objects.length === 0) return;
  const deadline = Date.now() + timeoutMs;
  const namespaces = objects.filter((o) => o.kind === 'Namespace').map((o) => o.metadata.name);
  const crds = objects.filter((o) => o.kind === 'CustomResourceDefinition').length;
  const what = [
    ...(namespaces.length ? [`namespace ${namespaces.join(', ')}`] : []),
    ...(crds ? [`${crds} CRDs`] : []),
  ].join(' and ');
  process.stderr.write(`◎ waiting for ${what} to be removed\n`);
  let delay = 100;
  for (;;) {
    const left: KubeObject[] = [];
    for (const obj of objects) {
      const live = await client.getOrUndefined({
        apiVersion: obj.apiVersion,
        kind: obj.kind,
        name: obj.metadata.name!,
      });
      if (live) left.push(live);
    }
    if (left.length === 0) return;
    if (Date.now() > deadline) {
      // The namespace first: it is what a reinstall trips over.
      left.sort((a, b) => Number(b.kind === 'Namespace') - Number(a.kind === 'Namespace'));
      const first = left[0]!;
      const why =
        stillThereBecause(first) ??
        (first.kind === 'Namespace'
          ? 'nothing has removed its content yet (the namespace controller of kube-controller-manager does)'
          : 'the API server has not finished deleting it');
      const others = left.length > 1 ? ` (${left.length - 1} more objects still terminating)` : '';
      throw new CliError(
        `${describe(first)} is still terminating after ${Math.round(timeoutMs / 1000)}s: ${why}${others}; see 'kubectl get ${first.kind === 'Namespace' ? 'namespace' : 'crd'} ${first.metadata.name} -o yaml', then run 'mooring uninstall --yes' again or wait before reinstalling.`,
      );
    }
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 2000);
  }
}
