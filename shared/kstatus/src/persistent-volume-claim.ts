import { stringField } from './fields.ts';
import { current, inProgress, type LiveObject, type StatusResult } from './result.ts';

/** kstatus for PersistentVolumeClaim: Current once Bound. */
export function persistentVolumeClaimStatus(object: LiveObject): StatusResult {
  const phase = stringField(object, 'status.phase', 'unknown');
  if (phase !== 'Bound') return inProgress('NotBound', `PVC is not Bound. phase: ${phase}`);
  return current('PVC is Bound');
}
