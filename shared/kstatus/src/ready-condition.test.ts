import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readyCondition } from './ready-condition.ts';
import type { LiveObject } from './result.ts';

function kustomization(conditions?: LiveObject[]): LiveObject {
  return {
    apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
    kind: 'Kustomization',
    metadata: { name: 'apps', namespace: 'flux-system', generation: 5 },
    spec: { path: './apps', interval: '10m' },
    status: { observedGeneration: 5, ...(conditions ? { conditions } : {}) },
  };
}

const cases: { name: string; conditions?: LiveObject[]; want: string; reason?: string }[] = [
  { name: 'without conditions is Current (upstream kstatus)', want: 'Current' },
  {
    name: 'with other conditions only is Current',
    conditions: [{ type: 'Healthy', status: 'True' }],
    want: 'Current',
  },
  {
    name: 'Ready=True for this generation is Current',
    conditions: [{ type: 'Ready', status: 'True', reason: 'ReconciliationSucceeded', observedGeneration: 5 }],
    want: 'Current',
  },
  {
    name: 'Ready=True without observedGeneration is Current',
    conditions: [{ type: 'Ready', status: 'True', reason: 'ReconciliationSucceeded' }],
    want: 'Current',
  },
  {
    name: 'Ready=True for an older generation is InProgress',
    conditions: [{ type: 'Ready', status: 'True', reason: 'ReconciliationSucceeded', observedGeneration: 4 }],
    want: 'InProgress',
    reason: 'LatestGenerationNotObserved',
  },
  {
    name: 'Ready=False is InProgress with its reason',
    conditions: [
      {
        type: 'Ready',
        status: 'False',
        reason: 'ArtifactFailed',
        message: 'source not found',
        observedGeneration: 5,
      },
    ],
    want: 'InProgress',
    reason: 'ArtifactFailed',
  },
  {
    name: 'Ready=Unknown is InProgress',
    conditions: [{ type: 'Ready', status: 'Unknown', reason: 'Progressing', observedGeneration: 5 }],
    want: 'InProgress',
  },
];

for (const c of cases) {
  test(`Ready rule: a custom resource ${c.name}`, () => {
    const result = readyCondition(kustomization(c.conditions));
    assert.equal(result.status, c.want, result.message);
    if (c.reason) assert.equal(result.reason, c.reason);
  });
}
