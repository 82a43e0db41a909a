import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatDuration, isDuration, parseDuration } from './duration.ts';

describe('parseDuration', () => {
  const valid: [string, number][] = [
    ['0s', 0],
    ['500ms', 500],
    ['1s', 1_000],
    ['30s', 30_000],
    ['1m30s', 90_000],
    ['1h', 3_600_000],
    ['1.5h', 5_400_000],
    ['0.1s', 100],
    ['2h45m', 9_900_000],
    ['1h0m0s', 3_600_000],
    ['1m1s500ms', 61_500],
    ['1.5ms', 1.5],
    ['90m', 5_400_000],
    ['10m10m', 1_200_000],
  ];
  for (const [text, ms] of valid) {
    it(`${text} is ${ms}ms`, () => assert.equal(parseDuration(text), ms));
  }

  const invalid = [
    '',
    '0',
    '10',
    's',
    '-1s',
    '+1s',
    '1d',
    '1 s',
    '1S',
    '.5s',
    '5.s',
    '1us',
    '1ns',
    'ms',
    '1h 30m',
  ];
  for (const text of invalid) {
    it(`rejects ${JSON.stringify(text)}`, () => {
      assert.throws(() => parseDuration(text), RangeError);
      assert.equal(isDuration(text), false);
    });
  }

  it('names the bad value in its error', () => {
    assert.throws(() => parseDuration('5 minutes'), /invalid duration "5 minutes"/);
  });

  it('matches the CRD pattern exactly', () => {
    const crd = /^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$/;
    for (const text of [...valid.map(([t]) => t), ...invalid])
      assert.equal(isDuration(text), crd.test(text), text);
  });
});

describe('formatDuration', () => {
  const cases: [number, string][] = [
    [0, '0s'],
    [1, '1ms'],
    [500, '500ms'],
    [999, '999ms'],
    [1_000, '1s'],
    [1_500, '1.5s'],
    [1_050, '1.05s'],
    [30_000, '30s'],
    [90_000, '1m30s'],
    [60_000, '1m0s'],
    [3_600_000, '1h0m0s'],
    [5_400_000, '1h30m0s'],
    [3_661_001, '1h1m1.001s'],
    [0.4, '0s'],
  ];
  for (const [ms, text] of cases) {
    it(`${ms}ms is ${text}`, () => assert.equal(formatDuration(ms), text));
  }

  it('round-trips through parseDuration', () => {
    for (const [ms, text] of cases) assert.equal(parseDuration(text), Math.round(ms));
  });

  it('rejects negative and non-finite values', () => {
    assert.throws(() => formatDuration(-1), RangeError);
    assert.throws(() => formatDuration(Number.NaN), RangeError);
    assert.throws(() => formatDuration(Number.POSITIVE_INFINITY), RangeError);
  });
});
