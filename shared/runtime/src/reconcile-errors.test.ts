import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Reason } from '@mooring/api';
import { RetryableError, StalledError, WaitingError } from './reconcile-errors.ts';

test('a reconcile error carries a known reason; an unknown one does not compile', () => {
  assert.equal(new StalledError(Reason.InvalidSpec, 'x').reason, 'InvalidSpec');
  assert.equal(new RetryableError('BuildFailed', 'x').reason, Reason.BuildFailed);
  assert.equal(new WaitingError(Reason.DependencyNotReady, 'x', 1_000).requeueAfterMs, 1_000);
  // The type-check step of `npm test` fails if any of these lines compiles.
  // @ts-expect-error 'BuildFaild' is not a Reason
  new RetryableError('BuildFaild', 'x');
  // @ts-expect-error a reason is one of Reason's members, not any string
  new StalledError(String('Anything'), 'x');
});
