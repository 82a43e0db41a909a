import { findCondition, intField } from './fields.ts';
import { current, inProgress, type LiveObject, type StatusResult } from './result.ts';

/** kstatus for apps/ReplicaSet: no ReplicaFailure and every replica labelled, available and ready. */
export function replicaSetStatus(object: LiveObject): StatusResult {
  if (findCondition(object, 'ReplicaFailure')?.status === 'True') {
    return inProgress('ReplicaFailure', 'Replica Failure condition. Check Pods');
  }
  const spec = intField(object, 'spec.replicas', 1);
  const replicas = intField(object, 'status.replicas', 0);
  const ready = intField(object, 'status.readyReplicas', 0);
  const available = intField(object, 'status.availableReplicas', 0);
  const labelled = intField(object, 'status.fullyLabeledReplicas', 0);
  if (spec > labelled) return inProgress('LessLabelled', `Labelled: ${labelled}/${spec}`);
  if (spec > available) return inProgress('LessAvailable', `Available: ${available}/${spec}`);
  if (spec > ready) return inProgress('LessReady', `Ready: ${ready}/${spec}`);
  if (replicas > spec) return inProgress('ExtraPods', `Pending termination: ${replicas - spec}`);
  return current(`ReplicaSet is available. Replicas: ${replicas}`);
}
