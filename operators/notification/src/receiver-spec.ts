import type { Receiver } from '@mooring/api';
import { VERIFIERS } from './receivers/index.ts';

/**
 * Why a Receiver cannot be served, or undefined: the checks its reconciler reports as
 * `ValidationFailed`, shared with the webhook server so a request is judged by the Receiver's
 * current spec (from the informer) without waiting for a status write.
 */
export function receiverProblem(
  receiver: Receiver,
  options: { noCrossNamespaceRefs: boolean },
): string | undefined {
  const ns = receiver.metadata.namespace ?? '';
  if (!VERIFIERS[receiver.spec.type]) return `type ${receiver.spec.type} is not supported by Mooring yet`;
  if (receiver.spec.resourceFilter || receiver.spec.resources.some((r) => r.filter))
    return 'CEL filters (resourceFilter, resources[].filter) are not supported yet; remove them';
  if (options.noCrossNamespaceRefs) {
    const other = receiver.spec.resources.find((r) => r.namespace && r.namespace !== ns);
    if (other)
      return `${other.kind} ${other.namespace}/${other.name} is in another namespace and cross-namespace references are disabled`;
  }
  if (!receiver.spec.secretRef?.name) return 'spec.secretRef is required';
  return undefined;
}
