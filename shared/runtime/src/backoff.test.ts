import assert from 'node:assert/strict';
import { test } from 'node:test';
import { backoffDelay } from './backoff.ts';

const noJitter = () => 0.5;

test('backoffDelay', async (t) => {
  const cases: { name: string; failures: number; random?: () => number; want: number }[] = [
    { name: 'first failure waits base', failures: 0, want: 100 },
    { name: 'doubles per failure', failures: 1, want: 200 },
    { name: 'doubles again', failures: 3, want: 800 },
    { name: 'capped at max', failures: 4, want: 1000 },
    { name: 'a long streak stays at max', failures: 5000, want: 1000 },
    { name: 'negative counts as none', failures: -3, want: 100 },
    { name: 'jitter spreads up', failures: 0, random: () => 1, want: 110 },
    { name: 'jitter spreads down', failures: 0, random: () => 0, want: 90 },
    { name: 'jitter never exceeds max', failures: 10, random: () => 1, want: 1000 },
    { name: 'jitter spreads down at max', failures: 10, random: () => 0, want: 900 },
  ];
  for (const c of cases) {
    await t.test(c.name, () => {
      const got = backoffDelay(c.failures, { baseMs: 100, maxMs: 1000, random: c.random ?? noJitter });
      assert.equal(got, c.want);
    });
  }
});

test('backoffDelay with a zero base never waits', () => {
  assert.equal(backoffDelay(10_000, { baseMs: 0, maxMs: 1000, random: noJitter }), 0);
});

test('backoffDelay with jitter disabled by fraction', () => {
  assert.equal(backoffDelay(2, { baseMs: 100, maxMs: 1000, jitterFraction: 0, random: () => 1 }), 400);
});
