import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AlertThrottle, type Suppressed } from './alert-throttle.ts';
import { ExpiringSet } from './expiring-set.ts';
import { RateLimiter } from './rate-limiter.ts';

test('RateLimiter: a burst, then refusals, then refill at the rate, per key', () => {
  let now = 0;
  const r = new RateLimiter(2, 3, { now: () => now });
  assert.deepEqual(
    [1, 2, 3, 4].map(() => r.tryTake('a')),
    [true, true, true, false],
  );
  assert.equal(r.tryTake('b'), true, 'keys are independent');
  now = 400;
  assert.equal(r.tryTake('a'), false, '0.8 tokens is not enough');
  now = 500;
  assert.equal(r.tryTake('a'), true);
  // A flood does not dig a hole: refusals take nothing.
  for (let i = 0; i < 1000; i++) r.tryTake('a');
  now = 1000;
  assert.equal(r.tryTake('a'), true);
});

test('RateLimiter forgets the least recently used key past its bound', () => {
  const r = new RateLimiter(0.001, 1, { maxKeys: 2 });
  assert.equal(r.tryTake('a'), true);
  assert.equal(r.tryTake('b'), true);
  assert.equal(r.tryTake('c'), true);
  assert.equal(r.tryTake('a'), true, 'a was evicted, so it starts with a full bucket');
  assert.equal(r.tryTake('c'), false);
});

test('ExpiringSet: a key is a duplicate until its time is up', () => {
  let now = 0;
  const s = new ExpiringSet(1000, 10, () => now);
  assert.equal(s.addIfAbsent('k'), true);
  assert.equal(s.addIfAbsent('k'), false);
  now = 999;
  assert.equal(s.addIfAbsent('k'), false);
  now = 1000;
  assert.equal(s.addIfAbsent('k'), true);
  for (let i = 0; i < 50; i++) s.addIfAbsent(`x${i}`);
  assert.ok(s.size <= 10, `bounded, got ${s.size}`);
});

test('AlertThrottle: a flood sends the burst, then one summary counting the rest', async () => {
  const summaries: [string, Suppressed<number>][] = [];
  const t = new AlertThrottle<number>((k, s) => summaries.push([k, s]), {
    burst: 3,
    perSecond: 0.001,
    summaryAfterMs: 50,
  });
  const admitted = Array.from({ length: 100 }, (_, i) => t.admit('ns/a', i, i % 10 === 0 ? 'error' : 'info'));
  assert.equal(admitted.filter(Boolean).length, 3);
  assert.equal(t.admit('ns/b', 0, 'info'), true, 'Alerts are limited separately');
  await new Promise((r) => setTimeout(r, 120));
  assert.equal(summaries.length, 1);
  assert.deepEqual(summaries[0], ['ns/a', { count: 97, errors: 9, last: 99 }]);
  t.close();
});
