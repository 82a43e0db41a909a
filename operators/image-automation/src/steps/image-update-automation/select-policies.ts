import { IMAGE_API_VERSION, type ImagePolicy, type ImageRef, type LabelSelector, Reason } from '@mooring/api';
import { ApiError, getCondition, StalledError } from '@mooring/runtime';
import type { ImageUpdateAutomationRun } from '../../image-update-automation-run.ts';
import type { PolicyImage } from '../../setters.ts';

/** `metav1.LabelSelector` as the API server's `labelSelector` query parameter. */
export function selectorString(selector: LabelSelector | undefined): string | undefined {
  if (!selector) return undefined;
  const parts = Object.entries(selector.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`);
  for (const e of selector.matchExpressions ?? []) {
    const values = (e.values ?? []).join(',');
    switch (e.operator) {
      case 'In':
        parts.push(`${e.key} in (${values})`);
        break;
      case 'NotIn':
        parts.push(`${e.key} notin (${values})`);
        break;
      case 'Exists':
        parts.push(e.key);
        break;
      case 'DoesNotExist':
        parts.push(`!${e.key}`);
        break;
      default:
        throw new StalledError(
          Reason.InvalidPolicySelector,
          `policySelector operator ${JSON.stringify(e.operator)} is not one of In, NotIn, Exists, DoesNotExist`,
        );
    }
  }
  return parts.length ? parts.join(',') : undefined;
}

/**
 * The Ready ImagePolicies of this namespace that `spec.policySelector` picks, by name, and their
 * images keyed as the `$imagepolicy` markers name them.
 */
export async function selectPolicies(run: ImageUpdateAutomationRun): Promise<undefined> {
  const { namespace } = run;
  let items: ImagePolicy[];
  try {
    const list = await run.deps.client.list<ImagePolicy>(IMAGE_API_VERSION, 'ImagePolicy', {
      namespace,
      labelSelector: selectorString(run.obj.spec.policySelector),
    });
    items = list.items;
  } catch (err) {
    if (err instanceof ApiError && err.statusCode === 400) {
      throw new StalledError(Reason.InvalidPolicySelector, `policySelector is not a valid label selector`);
    }
    throw err;
  }
  const policies = new Map<string, ImageRef>();
  for (const p of items.sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''))) {
    const ready = getCondition(p.status?.conditions, 'Ready');
    if (p.status?.latestRef && ready?.status === 'True')
      policies.set(p.metadata.name ?? '', p.status.latestRef);
  }
  run.policies = policies;
  run.images = new Map<string, PolicyImage>(
    [...policies].map(([name, image]) => [`${namespace}:${name}`, image]),
  );
  return undefined;
}
