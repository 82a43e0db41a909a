import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CelError } from './cel.ts';
import { compileHealthExprs, evaluateHealth } from './health-exprs.ts';

const exprs = compileHealthExprs([
  {
    apiVersion: 'serving.example.com/v1',
    kind: 'Model',
    current: "self.status.phase == 'Serving'",
    inProgress: "self.status.phase == 'Loading'",
    failed: "self.status.phase == 'Error'",
  },
  { apiVersion: 'cache.example.com/v9', current: 'self.status.ready' },
]);

const model = (phase: string, apiVersion = 'serving.example.com/v2') => ({
  apiVersion,
  kind: 'Model',
  status: { phase },
});

test('custom health evaluates inProgress, then failed, then current, matching the group only', () => {
  assert.equal(evaluateHealth(exprs, model('Serving'))?.status, 'Current', 'the version is ignored');
  assert.equal(evaluateHealth(exprs, model('Loading'))?.status, 'InProgress');
  assert.equal(evaluateHealth(exprs, model('Error'))?.status, 'Failed');
  assert.equal(evaluateHealth(exprs, model('Queued'))?.status, 'InProgress');
  assert.equal(
    evaluateHealth(exprs, { apiVersion: 'cache.example.com/v1', kind: 'Any', status: { ready: true } })
      ?.status,
    'Current',
  );
  assert.equal(
    evaluateHealth(exprs, { apiVersion: 'apps/v1', kind: 'Deployment' }),
    undefined,
    'kstatus decides',
  );
});

test('an expression that does not compile is refused up front', () => {
  assert.throws(() => compileHealthExprs([{ apiVersion: 'x/v1', current: 'self.(' }]), CelError);
});
