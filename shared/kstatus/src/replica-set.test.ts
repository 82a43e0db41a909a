import assert from 'node:assert/strict';
import { test } from 'node:test';
import { replicaSetStatus } from './replica-set.ts';
import type { LiveObject } from './result.ts';

function replicaSet(status: LiveObject): LiveObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: { name: 'web-5d8f7', namespace: 'apps', generation: 1 },
    spec: { replicas: 2 },
    status: { observedGeneration: 1, ...status },
  };
}

const settled = { replicas: 2, fullyLabeledReplicas: 2, readyReplicas: 2, availableReplicas: 2 };

const cases: { name: string; status: LiveObject; want: string; reason?: string }[] = [
  { name: 'all replicas labelled, available and ready', status: settled, want: 'Current' },
  {
    name: 'that cannot create pods (quota)',
    status: {
      ...settled,
      conditions: [
        { type: 'ReplicaFailure', status: 'True', reason: 'FailedCreate', message: 'exceeded quota' },
      ],
    },
    want: 'InProgress',
    reason: 'ReplicaFailure',
  },
  {
    name: 'with unlabelled pods',
    status: { ...settled, fullyLabeledReplicas: 1 },
    want: 'InProgress',
    reason: 'LessLabelled',
  },
  {
    name: 'with unavailable pods',
    status: { ...settled, availableReplicas: 1 },
    want: 'InProgress',
    reason: 'LessAvailable',
  },
  {
    name: 'with unready pods',
    status: { ...settled, readyReplicas: 1 },
    want: 'InProgress',
    reason: 'LessReady',
  },
  { name: 'with surplus pods', status: { ...settled, replicas: 3 }, want: 'InProgress', reason: 'ExtraPods' },
];

for (const c of cases) {
  test(`ReplicaSet ${c.name} is ${c.want}`, () => {
    const result = replicaSetStatus(replicaSet(c.status));
    assert.equal(result.status, c.want, result.message);
    if (c.reason) assert.equal(result.reason, c.reason);
  });
}
