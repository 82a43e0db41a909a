import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatFloat, goTimestamp } from './go-format.ts';

test('formatFloat prints like Go strconv.FormatFloat(f, "f", -1, 64)', () => {
  const cases: [number, string][] = [
    [0, '0'],
    [-0, '-0'],
    [1.5, '1.5'],
    [42, '42'],
    [-7, '-7'],
    [0.1, '0.1'],
    [1e21, '1000000000000000000000'],
    [1.25e22, '12500000000000000000000'],
    [1e-7, '0.0000001'],
    [-1.5e-9, '-0.0000000015'],
    [123456789012345680000, '123456789012345680000'],
    [Number.NaN, 'NaN'],
    [Number.POSITIVE_INFINITY, '+Inf'],
    [Number.NEGATIVE_INFINITY, '-Inf'],
  ];
  for (const [n, want] of cases) assert.equal(formatFloat(n), want, String(n));
});

test('goTimestamp prints YAML timestamps like Go time.MarshalText, and rejects other text', () => {
  const cases: [string, string | undefined][] = [
    ['2024-01-02T03:04:05Z', '2024-01-02T03:04:05Z'],
    ['2024-05-06T07:08:09.500Z', '2024-05-06T07:08:09.5Z'],
    ['2024-01-02', '2024-01-02T00:00:00Z'],
    ['2024-1-2 3:04:05', '2024-01-02T03:04:05Z'],
    ['2024-01-02T03:04:05+02:00', '2024-01-02T03:04:05+02:00'],
    ['2024-01-02T03:04:05+00:00', '2024-01-02T03:04:05Z'],
    ['2024-01-02T03:04:05.123456789123Z', '2024-01-02T03:04:05.123456789Z'],
    ['not a date', undefined],
    ['2024-01-02x', undefined],
  ];
  for (const [text, want] of cases) assert.equal(goTimestamp(text), want, text);
});
