import assert from 'node:assert/strict';
import { test } from 'node:test';
import { deploymentStatus } from './deployment.ts';
import type { LiveObject } from './result.ts';

/** A Deployment as the API server returns it after the controller has seen it. */
function deployment(spec: LiveObject, status: LiveObject): LiveObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'apps', generation: 2 },
    spec: { replicas: 3, progressDeadlineSeconds: 600, ...spec },
    status: { observedGeneration: 2, ...status },
  };
}

const available = { type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable' };
const rolledOut = { type: 'Progressing', status: 'True', reason: 'NewReplicaSetAvailable' };
const settled = {
  replicas: 3,
  updatedReplicas: 3,
  readyReplicas: 3,
  availableReplicas: 3,
  conditions: [available, rolledOut],
};

const cases: { name: string; spec?: LiveObject; status: LiveObject; want: string; reason?: string }[] = [
  { name: 'fully rolled out and available', status: settled, want: 'Current' },
  {
    name: 'past its progress deadline',
    status: {
      ...settled,
      conditions: [
        available,
        { type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded', message: 'timed out' },
      ],
    },
    want: 'Failed',
    reason: 'ProgressDeadlineExceeded',
  },
  { name: 'no pods yet', status: { conditions: [] }, want: 'InProgress', reason: 'LessReplicas' },
  {
    name: 'rolling out: old pods not yet replaced',
    status: { ...settled, updatedReplicas: 1 },
    want: 'InProgress',
    reason: 'LessUpdated',
  },
  {
    name: 'scaling down: surplus pods terminating',
    status: { ...settled, replicas: 4 },
    want: 'InProgress',
    reason: 'ExtraPods',
  },
  {
    name: 'new pods not yet available',
    status: { ...settled, availableReplicas: 2 },
    want: 'InProgress',
    reason: 'LessAvailable',
  },
  {
    name: 'pods not ready',
    status: { ...settled, readyReplicas: 2 },
    want: 'InProgress',
    reason: 'LessReady',
  },
  {
    name: 'counts fine but the new ReplicaSet is still progressing',
    status: {
      ...settled,
      conditions: [available, { type: 'Progressing', status: 'True', reason: 'ReplicaSetUpdated' }],
    },
    want: 'InProgress',
    reason: 'ReplicaSetNotAvailable',
  },
  {
    name: 'no progress deadline: Progressing is not required',
    spec: { progressDeadlineSeconds: undefined },
    status: { ...settled, conditions: [available] },
    want: 'Current',
  },
  {
    name: 'not Available',
    status: {
      ...settled,
      conditions: [{ type: 'Available', status: 'False', reason: 'MinimumReplicasUnavailable' }, rolledOut],
    },
    want: 'InProgress',
    reason: 'DeploymentNotAvailable',
  },
  {
    name: 'spec.replicas defaults to 1',
    spec: { replicas: undefined },
    status: { ...settled, replicas: 1, updatedReplicas: 1, readyReplicas: 1, availableReplicas: 1 },
    want: 'Current',
  },
  {
    name: 'scaled to zero',
    spec: { replicas: 0 },
    status: { conditions: [available, rolledOut] },
    want: 'Current',
  },
];

for (const c of cases) {
  test(`Deployment ${c.name} is ${c.want}`, () => {
    const result = deploymentStatus(deployment(c.spec ?? {}, c.status));
    assert.equal(result.status, c.want, result.message);
    if (c.reason) assert.equal(result.reason, c.reason);
  });
}
