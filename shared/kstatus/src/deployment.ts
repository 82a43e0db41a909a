import { conditions, intField } from './fields.ts';
import { current, failed, inProgress, type LiveObject, type StatusResult } from './result.ts';

const MAX_INT32 = 2 ** 31 - 1;

/** kstatus for apps/Deployment: replicas rolled out, the new ReplicaSet available, not past its deadline. */
export function deploymentStatus(object: LiveObject): StatusResult {
  // Without a deadline (unset, or MaxInt32 which the controller treats as unset) it never sets
  // Progressing, so that condition can't be required.
  let progressing = intField(object, 'spec.progressDeadlineSeconds', MAX_INT32) === MAX_INT32;
  let available = false;
  for (const c of conditions(object)) {
    if (c.type === 'Progressing') {
      if (c.reason === 'ProgressDeadlineExceeded') {
        return failed('ProgressDeadlineExceeded', c.message || 'Progress deadline exceeded');
      }
      if (c.status === 'True' && c.reason === 'NewReplicaSetAvailable') progressing = true;
    }
    if (c.type === 'Available' && c.status === 'True') available = true;
  }
  const spec = intField(object, 'spec.replicas', 1);
  const replicas = intField(object, 'status.replicas', 0);
  const updated = intField(object, 'status.updatedReplicas', 0);
  const ready = intField(object, 'status.readyReplicas', 0);
  const availableReplicas = intField(object, 'status.availableReplicas', 0);

  if (spec > replicas) return inProgress('LessReplicas', `Replicas: ${replicas}/${spec}`);
  if (spec > updated) return inProgress('LessUpdated', `Updated: ${updated}/${spec}`);
  if (replicas > spec) return inProgress('ExtraPods', `Pending termination: ${replicas - spec}`);
  if (updated > availableReplicas) {
    return inProgress('LessAvailable', `Available: ${availableReplicas}/${updated}`);
  }
  if (spec > ready) return inProgress('LessReady', `Ready: ${ready}/${spec}`);
  if (!progressing) return inProgress('ReplicaSetNotAvailable', 'ReplicaSet not Available');
  if (!available) return inProgress('DeploymentNotAvailable', 'Deployment not Available');
  return current(`Deployment is available. Replicas: ${replicas}`);
}
