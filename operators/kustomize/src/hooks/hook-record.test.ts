// Unit tests of the pure decision whether a hook phase runs, from status.hooks alone.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { HookRunStatus } from '@mooring/api';
import { phaseDecision, recordFor } from './hook-record.ts';

const key = { revision: 'main@sha1:aaa', digest: 'sha256:1', requestedAt: undefined };

test('a new revision or a new render starts a fresh record; the same one keeps what ran', () => {
  const stored: HookRunStatus = { ...key, preApply: { result: 'Succeeded' } };
  assert.deepEqual(recordFor(stored, key).preApply, { result: 'Succeeded' });
  assert.equal(recordFor(stored, { ...key, revision: 'main@sha1:bbb' }).preApply, undefined);
  assert.equal(recordFor(stored, { ...key, digest: 'sha256:2' }).preApply, undefined);
  assert.deepEqual(recordFor(undefined, key), { revision: key.revision, digest: key.digest });
});

test('a phase runs once per run; a failed one again only on a new requestedAt', () => {
  const cases: [string, HookRunStatus, string | undefined, ReturnType<typeof phaseDecision>][] = [
    ['never ran', { ...key }, undefined, { run: true }],
    ['succeeded', { ...key, preApply: { result: 'Succeeded' } }, 'later', { run: false }],
    [
      'failed, nothing asked since',
      { ...key, requestedAt: 'r1', preApply: { result: 'Failed', message: 'Job x failed' } },
      'r1',
      { run: false, failed: 'Job x failed' },
    ],
    [
      'failed, no requestedAt at all',
      { ...key, preApply: { result: 'Failed', message: 'Job x failed' } },
      undefined,
      { run: false, failed: 'Job x failed' },
    ],
    [
      'failed, then mooring reconcile asked again',
      { ...key, requestedAt: 'r1', preApply: { result: 'Failed', message: 'Job x failed' } },
      'r2',
      { run: true },
    ],
  ];
  for (const [what, record, requestedAt, want] of cases)
    assert.deepEqual(phaseDecision(record, 'pre-apply', requestedAt), want, what);
});
