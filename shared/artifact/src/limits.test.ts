import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_LIMITS, formatBytes, resolveLimits } from './limits.ts';

describe('resolveLimits', () => {
  it('fills unset limits with the defaults', () => {
    assert.deepEqual(resolveLimits({ maxEntries: 5, maxFileBytes: undefined }), {
      ...DEFAULT_LIMITS,
      maxEntries: 5,
    });
    assert.deepEqual(resolveLimits(undefined), DEFAULT_LIMITS);
  });
  it('refuses negative or fractional limits', () => {
    assert.throws(() => resolveLimits({ maxTotalBytes: -1 }), /maxTotalBytes must be a non-negative integer/);
    assert.throws(() => resolveLimits({ maxEntries: 1.5 }), /maxEntries/);
    assert.throws(() => resolveLimits({ maxFileBytes: Number.NaN }), /maxFileBytes/);
  });
});

describe('formatBytes', () => {
  const cases: [number, string][] = [
    [512, '512 bytes'],
    [2048, '2.0 KiB'],
    [100 * 1024 * 1024, '100 MiB'],
    [200_000_000, '190.7 MiB'],
  ];
  for (const [n, text] of cases) it(`${n} → ${text}`, () => assert.equal(formatBytes(n), text));
});
