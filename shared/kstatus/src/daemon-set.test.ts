import assert from 'node:assert/strict';
import { test } from 'node:test';
import { daemonSetStatus } from './daemon-set.ts';
import type { LiveObject } from './result.ts';

const settled = {
  observedGeneration: 4,
  desiredNumberScheduled: 2,
  currentNumberScheduled: 2,
  updatedNumberScheduled: 2,
  numberAvailable: 2,
  numberReady: 2,
};

function daemonSet(status: LiveObject | undefined, generation: number | null = 4): LiveObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name: 'agent', namespace: 'kube-system', ...(generation === null ? {} : { generation }) },
    spec: { selector: { matchLabels: { app: 'agent' } } },
    ...(status ? { status } : {}),
  };
}

const cases: { name: string; object: LiveObject; want: string; reason?: string }[] = [
  { name: 'on every node, updated and ready', object: daemonSet(settled), want: 'Current' },
  {
    name: 'not yet seen by its controller',
    object: daemonSet(undefined),
    want: 'InProgress',
    reason: 'NoObservedGeneration',
  },
  {
    name: 'without a generation',
    object: daemonSet(settled, null),
    want: 'InProgress',
    reason: 'NoGeneration',
  },
  {
    name: 'without desiredNumberScheduled',
    object: daemonSet({ observedGeneration: 4 }),
    want: 'InProgress',
    reason: 'NoDesiredNumber',
  },
  {
    name: 'missing on a node',
    object: daemonSet({ ...settled, currentNumberScheduled: 1 }),
    want: 'InProgress',
    reason: 'LessCurrent',
  },
  {
    name: 'rolling out',
    object: daemonSet({ ...settled, updatedNumberScheduled: 1 }),
    want: 'InProgress',
    reason: 'LessUpdated',
  },
  {
    name: 'not available',
    object: daemonSet({ ...settled, numberAvailable: 1 }),
    want: 'InProgress',
    reason: 'LessAvailable',
  },
  {
    name: 'not ready',
    object: daemonSet({ ...settled, numberReady: 0 }),
    want: 'InProgress',
    reason: 'LessReady',
  },
  {
    name: 'with nothing to schedule',
    object: daemonSet({ ...settled, desiredNumberScheduled: 0, currentNumberScheduled: 0 }),
    want: 'Current',
  },
];

for (const c of cases) {
  test(`DaemonSet ${c.name} is ${c.want}`, () => {
    const result = daemonSetStatus(c.object);
    assert.equal(result.status, c.want, result.message);
    if (c.reason) assert.equal(result.reason, c.reason);
  });
}
