import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { LiveObject } from './result.ts';
import { statefulSetStatus } from './stateful-set.ts';

function statefulSet(spec: LiveObject, status: LiveObject): LiveObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name: 'db', namespace: 'apps', generation: 1 },
    spec: { replicas: 3, updateStrategy: { type: 'RollingUpdate' }, ...spec },
    status: { observedGeneration: 1, ...status },
  };
}

const settled = {
  replicas: 3,
  readyReplicas: 3,
  currentReplicas: 3,
  updatedReplicas: 3,
  currentRevision: 'db-7c9f',
  updateRevision: 'db-7c9f',
};

const cases: { name: string; spec?: LiveObject; status: LiveObject; want: string; reason?: string }[] = [
  { name: 'all replicas current and on one revision', status: settled, want: 'Current' },
  {
    name: 'OnDelete, even with no pods',
    spec: { updateStrategy: { type: 'OnDelete' } },
    status: {},
    want: 'Current',
  },
  { name: 'missing pods', status: { ...settled, replicas: 2 }, want: 'InProgress', reason: 'LessReplicas' },
  {
    name: 'pods not ready',
    status: { ...settled, readyReplicas: 1 },
    want: 'InProgress',
    reason: 'LessReady',
  },
  {
    name: 'extra pods',
    status: { ...settled, replicas: 4, readyReplicas: 4 },
    want: 'InProgress',
    reason: 'ExtraPods',
  },
  {
    name: 'partitioned rollout short of its partition',
    spec: { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 1 } } },
    status: { ...settled, updatedReplicas: 1, updateRevision: 'db-8d1e' },
    want: 'InProgress',
    reason: 'PartitionRollout',
  },
  {
    name: 'partitioned rollout complete above the partition',
    spec: { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 1 } } },
    status: { ...settled, updatedReplicas: 2, updateRevision: 'db-8d1e' },
    want: 'Current',
  },
  {
    name: 'fewer current replicas',
    status: { ...settled, currentReplicas: 2 },
    want: 'InProgress',
    reason: 'LessCurrent',
  },
  {
    name: 'revisions differ',
    status: { ...settled, updateRevision: 'db-8d1e' },
    want: 'InProgress',
    reason: 'RevisionMismatch',
  },
];

for (const c of cases) {
  test(`StatefulSet ${c.name} is ${c.want}`, () => {
    const result = statefulSetStatus(statefulSet(c.spec ?? {}, c.status));
    assert.equal(result.status, c.want, result.message);
    if (c.reason) assert.equal(result.reason, c.reason);
  });
}
