import { field, findCondition } from './fields.ts';
import { current, inProgress, type LiveObject, type StatusResult } from './result.ts';

/**
 * The rule for kinds kstatus has no rule for (custom resources). Upstream kstatus ignores `Ready`
 * and calls such objects Current; Mooring, like Flux's health checks, waits for `Ready=True` when
 * the object has a `Ready` condition, and for that condition to speak of the latest generation
 * when it carries `observedGeneration`. Whether a `Ready=False` object is stuck is for `Stalled`
 * to say, so it stays InProgress. Objects without `Ready` are Current, as upstream.
 */
export function readyCondition(object: LiveObject): StatusResult {
  const ready = findCondition(object, 'Ready');
  if (!ready) return current('Resource is current');
  const generation = field(object, 'metadata.generation');
  if (
    ready.observedGeneration !== undefined &&
    typeof generation === 'number' &&
    ready.observedGeneration !== generation
  ) {
    return inProgress(
      'LatestGenerationNotObserved',
      `Ready condition is for generation ${ready.observedGeneration}, but the latest generation is ${generation}`,
    );
  }
  if (ready.status === 'True') return current(ready.message || 'Resource is Ready');
  return inProgress(ready.reason || 'NotReady', ready.message || `Ready condition is ${ready.status}`);
}
