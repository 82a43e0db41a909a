// When a hook's object counts as done, and which tests a filter runs: pure decisions over plain
// objects, as Helm's watchUntilReady and ReleaseTesting make them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { HookRecord } from '@mooring/helm';
import type { KubeObject } from '@mooring/runtime';
import { hookReadiness } from '../hooks/hook-wait.ts';
import { filterTests } from './hooks.ts';

const obj = (kind: string, status?: unknown): KubeObject => ({
  apiVersion: kind === 'Job' ? 'batch/v1' : 'v1',
  kind,
  metadata: { name: 'h' },
  ...(status === undefined ? {} : { status }),
});

test('hookReadiness: Jobs by condition, Pods by phase, other kinds at once, a gone object done', () => {
  const cases: [string, KubeObject | undefined, ReturnType<typeof hookReadiness>][] = [
    ['a Job without conditions', obj('Job', { active: 1 }), { state: 'waiting' }],
    [
      'a Job Complete',
      obj('Job', { conditions: [{ type: 'Complete', status: 'True' }] }),
      { state: 'ready' },
    ],
    [
      'a Job about to fail (FailureTarget) still waits for Failed, as Helm does',
      obj('Job', { conditions: [{ type: 'FailureTarget', status: 'True', reason: 'DeadlineExceeded' }] }),
      { state: 'waiting' },
    ],
    [
      'a Job Failed, with reason and message',
      obj('Job', {
        conditions: [
          {
            type: 'Failed',
            status: 'True',
            reason: 'BackoffLimitExceeded',
            message: 'Job has reached the specified backoff limit',
          },
        ],
      }),
      { state: 'failed', message: 'BackoffLimitExceeded: Job has reached the specified backoff limit' },
    ],
    [
      'a Job Failed=False',
      obj('Job', { conditions: [{ type: 'Failed', status: 'False' }] }),
      { state: 'waiting' },
    ],
    ['a running Pod', obj('Pod', { phase: 'Running' }), { state: 'waiting' }],
    ['a Succeeded Pod', obj('Pod', { phase: 'Succeeded' }), { state: 'ready' }],
    [
      'a Failed Pod names the container that exited',
      obj('Pod', {
        phase: 'Failed',
        containerStatuses: [
          { name: 'ok', state: { terminated: { exitCode: 0 } } },
          { name: 'test', state: { terminated: { exitCode: 2, reason: 'Error' } } },
        ],
      }),
      { state: 'failed', message: 'pod h failed: container test exited with code 2 (Error)' },
    ],
    ['a ConfigMap', obj('ConfigMap'), { state: 'ready' }],
    ['an object deleted while waited on', undefined, { state: 'ready' }],
  ];
  for (const [what, live, want] of cases) assert.deepEqual(hookReadiness(live), want, what);
});

test('filterTests: excluded names go, then only included names stay (helm test --filter)', () => {
  const hooks = ['a', 'b', 'c'].map(
    (name): HookRecord => ({ name, last_run: { started_at: '', completed_at: '', phase: '' } }),
  );
  const names = (f: Parameters<typeof filterTests>[1]) => filterTests(hooks, f).map((h) => h.name);
  assert.deepEqual(names(undefined), ['a', 'b', 'c']);
  assert.deepEqual(names([{ name: 'b', exclude: true }]), ['a', 'c']);
  assert.deepEqual(names([{ name: 'b' }]), ['b']);
  assert.deepEqual(names([{ name: 'a' }, { name: 'b' }, { name: 'b', exclude: true }]), ['a']);
});
