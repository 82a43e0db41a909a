import assert from 'node:assert/strict';
import { test } from 'node:test';
import { podStatus } from './pod.ts';
import type { LiveObject } from './result.ts';

const created = '2026-01-01T00:00:00Z';
const soon = new Date('2026-01-01T00:00:10Z');
const later = new Date('2026-01-01T00:00:16Z');

function pod(status: LiveObject): LiveObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web-5d8f7-x2k4q', namespace: 'apps', creationTimestamp: created },
    spec: {
      containers: [
        { name: 'app', image: 'nginx' },
        { name: 'sidecar', image: 'envoy' },
      ],
    },
    status,
  };
}

const unschedulable = {
  phase: 'Pending',
  conditions: [
    { type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/2 nodes are available' },
  ],
};

const cases: { name: string; status: LiveObject; now?: Date; want: string; reason?: string }[] = [
  { name: 'Succeeded', status: { phase: 'Succeeded' }, want: 'Current' },
  { name: 'Failed (it has completed)', status: { phase: 'Failed' }, want: 'Current' },
  {
    name: 'Running and Ready',
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
    want: 'Current',
  },
  {
    name: 'Running with a container in CrashLoopBackOff',
    status: {
      phase: 'Running',
      conditions: [{ type: 'Ready', status: 'False', reason: 'ContainersNotReady' }],
      containerStatuses: [
        { name: 'app', ready: true, state: { running: { startedAt: created } } },
        { name: 'sidecar', ready: false, state: { waiting: { reason: 'CrashLoopBackOff' } } },
      ],
    },
    want: 'Failed',
    reason: 'ContainerCrashLooping',
  },
  {
    name: 'Running but not Ready',
    status: {
      phase: 'Running',
      conditions: [{ type: 'Ready', status: 'False' }],
      containerStatuses: [{ name: 'app', state: { waiting: { reason: 'ContainerCreating' } } }],
    },
    want: 'InProgress',
    reason: 'PodRunningNotReady',
  },
  {
    name: 'unschedulable within 15 s',
    status: unschedulable,
    now: soon,
    want: 'InProgress',
    reason: 'PodNotScheduled',
  },
  {
    name: 'unschedulable after 15 s',
    status: unschedulable,
    now: later,
    want: 'Failed',
    reason: 'PodUnschedulable',
  },
  {
    name: 'Pending and scheduled',
    status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'True' }] },
    want: 'InProgress',
    reason: 'PodPending',
  },
  { name: 'without a phase', status: {}, want: 'InProgress', reason: 'PodNotObserved' },
  { name: 'in a phase kstatus does not know', status: { phase: 'Exploded' }, want: 'Unknown' },
];

for (const c of cases) {
  test(`Pod ${c.name} is ${c.want}`, () => {
    const result = podStatus(pod(c.status), c.now ?? later);
    assert.equal(result.status, c.want, result.message);
    if (c.reason) assert.equal(result.reason, c.reason);
  });
}

test('Pod crash-loop message names the looping container', () => {
  const result = podStatus(
    pod({
      phase: 'Running',
      containerStatuses: [{ name: 'sidecar', state: { waiting: { reason: 'CrashLoopBackOff' } } }],
    }),
    later,
  );
  assert.equal(result.message, 'Containers in CrashLoop state: sidecar');
});
