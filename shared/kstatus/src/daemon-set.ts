import { intField } from './fields.ts';
import { checkGenerationSet } from './generic.ts';
import { current, inProgress, type LiveObject, type StatusResult } from './result.ts';

/** kstatus for apps/DaemonSet: every desired node runs an updated, available, ready pod. */
export function daemonSetStatus(object: LiveObject): StatusResult {
  const unobserved = checkGenerationSet(object);
  if (unobserved) return unobserved;
  const desired = intField(object, 'status.desiredNumberScheduled', -1);
  if (desired === -1) return inProgress('NoDesiredNumber', 'Missing .status.desiredNumberScheduled');
  const scheduled = intField(object, 'status.currentNumberScheduled', 0);
  const updated = intField(object, 'status.updatedNumberScheduled', 0);
  const available = intField(object, 'status.numberAvailable', 0);
  const ready = intField(object, 'status.numberReady', 0);
  if (desired > scheduled) return inProgress('LessCurrent', `Current: ${scheduled}/${desired}`);
  if (desired > updated) return inProgress('LessUpdated', `Updated: ${updated}/${desired}`);
  if (desired > available) return inProgress('LessAvailable', `Available: ${available}/${desired}`);
  if (desired > ready) return inProgress('LessReady', `Ready: ${ready}/${desired}`);
  return current(`All replicas scheduled as expected. Replicas: ${desired}`);
}
