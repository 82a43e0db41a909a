import assert from 'node:assert/strict';
import { test } from 'node:test';
import { computeStatus } from './compute-status.ts';
import type { LiveObject } from './result.ts';

const now = new Date('2026-01-01T00:01:00Z');

const rolledOutDeployment: LiveObject = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'apps', generation: 1 },
  spec: { replicas: 1, progressDeadlineSeconds: 600 },
  status: {
    observedGeneration: 1,
    replicas: 1,
    updatedReplicas: 1,
    readyReplicas: 1,
    availableReplicas: 1,
    conditions: [
      { type: 'Available', status: 'True' },
      { type: 'Progressing', status: 'True', reason: 'NewReplicaSetAvailable' },
    ],
  },
};

const cases: { name: string; object: LiveObject; want: string; reason?: string }[] = [
  { name: 'a rolled-out Deployment is Current', object: rolledOutDeployment, want: 'Current' },
  {
    name: 'a rolled-out Deployment with a newer spec is InProgress (generic check first)',
    object: { ...rolledOutDeployment, metadata: { name: 'web', generation: 2 } },
    want: 'InProgress',
    reason: 'LatestGenerationNotObserved',
  },
  {
    name: 'a Deployment being deleted is Terminating',
    object: {
      ...rolledOutDeployment,
      metadata: { name: 'web', generation: 1, deletionTimestamp: '2026-01-01T00:00:00Z' },
    },
    want: 'Terminating',
  },
  {
    name: 'a Deployment kind of another group gets the Ready rule, not the Deployment rule',
    object: {
      apiVersion: 'example.com/v1',
      kind: 'Deployment',
      metadata: { name: 'x', generation: 1 },
      status: { observedGeneration: 1, conditions: [{ type: 'Ready', status: 'False', reason: 'Waiting' }] },
    },
    want: 'InProgress',
    reason: 'Waiting',
  },
  {
    name: 'a ConfigMap is Current',
    object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: {} },
    want: 'Current',
  },
  {
    name: 'a Secret is Current',
    object: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, type: 'Opaque' },
    want: 'Current',
  },
  {
    name: 'a CronJob is Current',
    object: {
      apiVersion: 'batch/v1',
      kind: 'CronJob',
      metadata: { name: 'c', generation: 1 },
      spec: { schedule: '@daily' },
    },
    want: 'Current',
  },
  {
    name: 'a PodDisruptionBudget is Current',
    object: {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'p', generation: 1 },
      status: { observedGeneration: 1 },
    },
    want: 'Current',
  },
  {
    name: 'a Namespace (no rule, no conditions) is Current',
    object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'apps' }, status: { phase: 'Active' } },
    want: 'Current',
  },
  {
    name: 'a running Job is InProgress',
    object: {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'j', generation: 1 },
      status: { startTime: '2026-01-01T00:00:00Z', active: 1 },
    },
    want: 'InProgress',
  },
  {
    name: 'an unschedulable Pod past the window is Failed',
    object: {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', creationTimestamp: '2026-01-01T00:00:00Z' },
      status: {
        phase: 'Pending',
        conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }],
      },
    },
    want: 'Failed',
    reason: 'PodUnschedulable',
  },
  {
    name: 'a Flux-style custom resource that is Stalled is Failed',
    object: {
      apiVersion: 'source.mooring.dev/v1',
      kind: 'GitRepository',
      metadata: { name: 'g', generation: 2 },
      status: {
        observedGeneration: 2,
        conditions: [
          { type: 'Ready', status: 'False', reason: 'InvalidURL' },
          { type: 'Stalled', status: 'True', reason: 'InvalidURL', message: 'the URL is not valid' },
        ],
      },
    },
    want: 'Failed',
    reason: 'InvalidURL',
  },
  {
    name: 'an object without apiVersion or kind is Current',
    object: { metadata: { name: 'x' } },
    want: 'Current',
  },
];

for (const c of cases) {
  test(`computeStatus: ${c.name}`, () => {
    const result = computeStatus(c.object, now);
    assert.equal(result.status, c.want, result.message);
    if (c.reason) assert.equal(result.reason, c.reason);
  });
}

test('computeStatus: an unschedulable Pod uses the real clock by default', () => {
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', creationTimestamp: new Date().toISOString() },
    status: {
      phase: 'Pending',
      conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }],
    },
  };
  assert.equal(computeStatus(pod).status, 'InProgress');
});
