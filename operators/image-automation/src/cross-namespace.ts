import type { AccessFrom } from '@mooring/api';
import { type KubeClient, type KubeObject, StalledError } from '@mooring/runtime';

/**
 * Whether an object in `from` may use one in `to`: always within a namespace; across namespaces
 * never under `--no-cross-namespace-refs`, and otherwise only when the target's `accessFrom`
 * (when it has that field) selects the referring namespace by its labels. Throws AccessDenied.
 */
export async function checkCrossNamespace(
  client: KubeClient,
  opts: {
    noCrossNamespaceRefs: boolean;
    from: string;
    to: string;
    what: string;
    accessFrom?: AccessFrom | null;
  },
): Promise<void> {
  if (opts.from === opts.to) return;
  if (opts.noCrossNamespaceRefs) {
    throw new StalledError(
      'AccessDenied',
      `cross-namespace reference to ${opts.what} is not allowed (--no-cross-namespace-refs)`,
    );
  }
  if (opts.accessFrom === null) return; // the target kind has no ACL
  const selectors = opts.accessFrom?.namespaceSelectors ?? [];
  if (selectors.length > 0) {
    const ns = await client.getOrUndefined<KubeObject>({
      apiVersion: 'v1',
      kind: 'Namespace',
      name: opts.from,
    });
    const labels = ns?.metadata.labels ?? {};
    const allowed = selectors.some((s) =>
      Object.entries(s.matchLabels ?? {}).every(([k, v]) => labels[k] === v),
    );
    if (allowed) return;
  }
  throw new StalledError(
    'AccessDenied',
    `${opts.what} does not allow access from namespace ${opts.from} (spec.accessFrom)`,
  );
}
