import { ALWAYS_CURRENT_KINDS, alwaysCurrent } from './always-current.ts';
import { customResourceDefinitionStatus } from './custom-resource-definition.ts';
import { daemonSetStatus } from './daemon-set.ts';
import { deploymentStatus } from './deployment.ts';
import { groupKind } from './fields.ts';
import { checkGeneric } from './generic.ts';
import { jobStatus } from './job.ts';
import { persistentVolumeClaimStatus } from './persistent-volume-claim.ts';
import { podStatus } from './pod.ts';
import { readyCondition } from './ready-condition.ts';
import { replicaSetStatus } from './replica-set.ts';
import type { KindRule, LiveObject, StatusResult } from './result.ts';
import { serviceStatus } from './service.ts';
import { statefulSetStatus } from './stateful-set.ts';

/** Rules keyed `group/Kind` (bare `Kind` for the core group), as cli-utils' legacyTypes. */
const RULES: ReadonlyMap<string, KindRule> = new Map<string, KindRule>([
  ['Service', serviceStatus],
  ['Pod', podStatus],
  ['PersistentVolumeClaim', persistentVolumeClaimStatus],
  ['apps/StatefulSet', statefulSetStatus],
  ['apps/DaemonSet', daemonSetStatus],
  ['extensions/DaemonSet', daemonSetStatus],
  ['apps/Deployment', deploymentStatus],
  ['extensions/Deployment', deploymentStatus],
  ['apps/ReplicaSet', replicaSetStatus],
  ['extensions/ReplicaSet', replicaSetStatus],
  ['batch/Job', jobStatus],
  ['apiextensions.k8s.io/CustomResourceDefinition', customResourceDefinitionStatus],
  ...ALWAYS_CURRENT_KINDS.map((kind): [string, KindRule] => [kind, alwaysCurrent]),
]);

/**
 * The kstatus of a live object: generic checks first (deletion, observed generation,
 * Reconciling/Stalled), then its kind's rule, else its Ready condition. `now` only matters for
 * Pods, which count as unschedulable 15 s after creation.
 */
export function computeStatus(object: LiveObject, now: Date = new Date()): StatusResult {
  const generic = checkGeneric(object);
  if (generic) return generic;
  const rule = RULES.get(groupKind(object));
  return rule ? rule(object, now) : readyCondition(object);
}
