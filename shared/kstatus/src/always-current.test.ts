import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ALWAYS_CURRENT_KINDS, alwaysCurrent } from './always-current.ts';

test('the always-current kinds are those of cli-utils', () => {
  assert.deepEqual([...ALWAYS_CURRENT_KINDS].sort(), [
    'ConfigMap',
    'Secret',
    'batch/CronJob',
    'policy/PodDisruptionBudget',
  ]);
  assert.equal(alwaysCurrent().status, 'Current');
});
