import { conditions, field, stringField } from './fields.ts';
import { inProgress, type LiveObject, type StatusResult } from './result.ts';

/**
 * The checks every object gets before its kind's rule (cli-utils generic.go): deletion, an
 * unobserved generation, then the standard `Reconciling` and `Stalled` conditions. Undefined
 * when none of them decides.
 */
export function checkGeneric(object: LiveObject): StatusResult | undefined {
  if (stringField(object, 'metadata.deletionTimestamp') !== '') {
    return { status: 'Terminating', message: 'Resource scheduled for deletion' };
  }
  const unobserved = checkGeneration(object);
  if (unobserved) return unobserved;
  for (const c of conditions(object)) {
    if (c.type === 'Reconciling' && c.status === 'True') {
      return { status: 'InProgress', reason: c.reason, message: c.message ?? '' };
    }
    if (c.type === 'Stalled' && c.status === 'True') {
      return { status: 'Failed', reason: c.reason, message: c.message ?? '' };
    }
  }
  return undefined;
}

/** InProgress when both generations are present and differ; a missing one skips the check. */
export function checkGeneration(object: LiveObject): StatusResult | undefined {
  const generation = field(object, 'metadata.generation');
  const observed = field(object, 'status.observedGeneration');
  if (typeof generation !== 'number' || typeof observed !== 'number' || generation === observed) {
    return undefined;
  }
  const kind = stringField(object, 'kind');
  return inProgress(
    'LatestGenerationNotObserved',
    `${kind} generation is ${generation}, but latest observed generation is ${observed}`,
  );
}

/** InProgress unless both generations are present (DaemonSet needs them: its controller sets both). */
export function checkGenerationSet(object: LiveObject): StatusResult | undefined {
  const kind = stringField(object, 'kind');
  if (typeof field(object, 'metadata.generation') !== 'number') {
    return inProgress('NoGeneration', `${kind} metadata.generation not found`);
  }
  if (typeof field(object, 'status.observedGeneration') !== 'number') {
    return inProgress('NoObservedGeneration', `${kind} status.observedGeneration not found`);
  }
  return undefined;
}
