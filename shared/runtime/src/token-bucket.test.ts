import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TokenBucket } from './token-bucket.ts';

test('lets a burst through at once, then spaces requests at the QPS', () => {
  let now = 0;
  const bucket = new TokenBucket(10, 3, () => now);
  assert.deepEqual([bucket.reserve(), bucket.reserve(), bucket.reserve()], [0, 0, 0]);
  assert.equal(bucket.reserve(), 100, 'the fourth request waits one token at 10 qps');
  assert.equal(bucket.reserve(), 200, 'and the fifth two');
  now = 1_000;
  // A second refills 10 tokens, of which two repay the debt; the burst caps the rest at 3.
  assert.deepEqual([bucket.reserve(), bucket.reserve(), bucket.reserve()], [0, 0, 0]);
  assert.equal(bucket.reserve(), 100);
});

test('refuses a rate limit that could never let a request through', () => {
  assert.throws(() => new TokenBucket(0, 1), /invalid rate limit/);
  assert.throws(() => new TokenBucket(5, 0), /invalid rate limit/);
});
