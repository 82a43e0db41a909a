import { intField, stringField } from './fields.ts';
import { current, inProgress, type LiveObject, type StatusResult } from './result.ts';

/** kstatus for apps/StatefulSet: its controller sets no conditions, so only counts and revisions tell. */
export function statefulSetStatus(object: LiveObject): StatusResult {
  if (stringField(object, 'spec.updateStrategy.type') === 'OnDelete') {
    return current('StatefulSet is using the ondelete update strategy');
  }
  const spec = intField(object, 'spec.replicas', 1);
  const ready = intField(object, 'status.readyReplicas', 0);
  const currentReplicas = intField(object, 'status.currentReplicas', 0);
  const updated = intField(object, 'status.updatedReplicas', 0);
  const replicas = intField(object, 'status.replicas', 0);
  const partition = intField(object, 'spec.updateStrategy.rollingUpdate.partition', -1);

  if (spec > replicas) return inProgress('LessReplicas', `Replicas: ${replicas}/${spec}`);
  if (spec > ready) return inProgress('LessReady', `Ready: ${ready}/${spec}`);
  if (replicas > spec) return inProgress('ExtraPods', `Pending termination: ${replicas - spec}`);
  if (partition !== -1) {
    if (updated < spec - partition) {
      return inProgress('PartitionRollout', `updated: ${updated}/${spec - partition}`);
    }
    return current(`Partition rollout complete. updated: ${updated}`);
  }
  if (spec > currentReplicas) return inProgress('LessCurrent', `current: ${currentReplicas}/${spec}`);
  if (stringField(object, 'status.currentRevision') !== stringField(object, 'status.updateRevision')) {
    return inProgress('RevisionMismatch', 'Waiting for updated revision to match current');
  }
  return current(`All replicas scheduled as expected. Replicas: ${replicas}`);
}
