import assert from 'node:assert/strict';
import { test } from 'node:test';
import { jobStatus } from './job.ts';
import type { LiveObject } from './result.ts';

function job(spec: LiveObject, status: LiveObject): LiveObject {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: 'migrate', namespace: 'apps', generation: 1 },
    spec: { completions: 1, parallelism: 1, template: { spec: { containers: [] } }, ...spec },
    status,
  };
}

const started = '2026-01-01T00:00:00Z';

const cases: { name: string; spec?: LiveObject; status: LiveObject; want: string; reason?: string }[] = [
  {
    name: 'complete',
    status: {
      startTime: started,
      succeeded: 1,
      conditions: [
        { type: 'SuccessCriteriaMet', status: 'True' },
        { type: 'Complete', status: 'True' },
      ],
    },
    want: 'Current',
  },
  {
    name: 'failed',
    status: {
      startTime: started,
      failed: 6,
      conditions: [{ type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded' }],
    },
    want: 'Failed',
    reason: 'JobFailed',
  },
  {
    name: 'suspended by condition',
    spec: { suspend: true },
    status: { conditions: [{ type: 'Suspended', status: 'True', reason: 'JobSuspended' }] },
    want: 'Current',
  },
  { name: 'suspended before its controller saw it', spec: { suspend: true }, status: {}, want: 'Current' },
  // Flux's override: upstream kstatus calls a running Job Current.
  { name: 'running', status: { startTime: started, active: 1 }, want: 'InProgress', reason: 'JobInProgress' },
  { name: 'not started', status: {}, want: 'InProgress', reason: 'JobInProgress' },
  {
    name: 'resumed after suspension',
    spec: { suspend: false },
    status: {
      startTime: started,
      active: 1,
      conditions: [{ type: 'Suspended', status: 'False', reason: 'JobResumed' }],
    },
    want: 'InProgress',
  },
];

for (const c of cases) {
  test(`Job ${c.name} is ${c.want}`, () => {
    const result = jobStatus(job(c.spec ?? {}, c.status));
    assert.equal(result.status, c.want, result.message);
    if (c.reason) assert.equal(result.reason, c.reason);
  });
}

test('Job completion message counts succeeded pods against completions', () => {
  const result = jobStatus(
    job(
      { completions: 3, parallelism: 2 },
      { succeeded: 3, conditions: [{ type: 'Complete', status: 'True' }] },
    ),
  );
  assert.equal(result.message, 'Job Completed. succeeded: 3/3');
});
