// Fuzzes Go-style duration strings (shared/runtime/src/duration.ts): parseDuration gives a finite,
// non-negative number of milliseconds or a RangeError naming the text, agrees with the CRD pattern,
// is exact to the nearest double (within its documented microsecond), and round-trips with formatDuration.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DURATION_PATTERN } from '@mooring/api';
import { formatDuration, isDuration, parseDuration } from '@mooring/runtime/duration';
import { check, corpusFiles, fc } from './fuzz.ts';

const PATTERN = new RegExp(DURATION_PATTERN);
const UNIT_MS: Record<string, bigint> = { h: 3_600_000n, m: 60_000n, s: 1_000n, ms: 1n };

/** The exact value of a duration the pattern accepts, as a fraction num/den of milliseconds. */
function exactMs(text: string): { num: bigint; den: bigint } {
  let num = 0n;
  let den = 1n;
  for (const [, whole, frac = '', unit] of text.matchAll(/([0-9]+)(?:\.([0-9]+))?(ms|s|m|h)/g)) {
    const d = 10n ** BigInt(frac.length);
    const termNum = (BigInt(whole!) * d + BigInt(frac || '0')) * UNIT_MS[unit!]!;
    // num/den + termNum/d, over the larger power of ten.
    if (d > den) {
      num *= d / den;
      den = d;
    }
    num += termNum * (den / d);
  }
  return { num, den };
}

/** Distance between adjacent doubles at x. */
function ulp(x: number): number {
  if (x === 0) return Number.MIN_VALUE;
  return 2 ** (Math.floor(Math.log2(Math.abs(x))) - 52);
}

function checkDuration(text: string): void {
  const valid = PATTERN.test(text);
  let value: number;
  try {
    value = parseDuration(text);
  } catch (err) {
    assert.ok(err instanceof RangeError, `not a RangeError: ${(err as Error)?.stack}`);
    assert.ok(err.message.includes(JSON.stringify(text)), `the message names the input: ${err.message}`);
    if (!valid) {
      assert.match(err.message, /invalid duration/);
      assert.equal(isDuration(text), false);
      return;
    }
    // Accepted by the pattern: refused only when too long for a safe integer of milliseconds.
    const { num, den } = exactMs(text);
    assert.match(err.message, /too long/);
    assert.ok(num / den >= BigInt(Number.MAX_SAFE_INTEGER) - 1000n, `refused a duration that fits: ${text}`);
    return;
  }
  assert.ok(valid, `parseDuration accepted ${JSON.stringify(text)}, which the CRD pattern refuses`);
  assert.equal(isDuration(text), true);
  assert.ok(Number.isFinite(value) && value >= 0, `not a finite non-negative number: ${value}`);
  const { num, den } = exactMs(text);
  const exact = Number(num) / Number(den);
  // Within a microsecond, as documented (float noise may cost a rounding step), or within the
  // spacing of doubles where that is coarser.
  const tolerance = Math.max(0.001, 2 * ulp(exact));
  assert.ok(
    Math.abs(value - exact) <= tolerance,
    `${JSON.stringify(text)} parsed to ${value}, exactly ${num}/${den} ms (tolerance ${tolerance})`,
  );
  const formatted = formatDuration(value);
  assert.equal(parseDuration(formatted), Math.round(value), `round trip through ${formatted}`);
}

const term = fc.record({
  whole: fc.oneof(fc.nat({ max: 1000 }), fc.nat(), fc.bigInt({ min: 0n, max: 10n ** 20n })),
  frac: fc.option(fc.stringMatching(/^[0-9]{1,12}$/), { nil: undefined }),
  unit: fc.constantFrom('h', 'm', 's', 'ms'),
});
const validDuration = fc
  .array(term, { minLength: 1, maxLength: 5 })
  .map((terms) =>
    terms.map((t) => `${t.whole}${t.frac === undefined ? '' : `.${t.frac}`}${t.unit}`).join(''),
  );

const durationAlphabet = fc.constantFrom(
  ...'0123456789.'.split(''),
  'h',
  'm',
  's',
  'ms',
  'us',
  'µs',
  'ns',
  'd',
  ' ',
  '-',
  '+',
  'e',
  'E',
  '_',
  '\n',
  '\0',
  '１',
  'x',
);
const anyText = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ maxLength: 40, unit: 'binary' }),
  fc.string({ maxLength: 30, unit: durationAlphabet }),
  validDuration,
  // A valid duration with a little damage.
  fc
    .tuple(validDuration, fc.nat(), durationAlphabet)
    .map(([d, at, c]) => d.slice(0, at % (d.length + 1)) + c + d.slice(at % (d.length + 1))),
);

describe('fuzz: duration strings', () => {
  test('random strings: a finite non-negative number of ms or a RangeError naming the text', async (t) => {
    await check(
      t,
      import.meta.url,
      fc.property(anyText, (text) => checkDuration(text)),
      2000,
    );
  });

  test('valid durations: exact value, and formatDuration reads back', async (t) => {
    await check(
      t,
      import.meta.url,
      fc.property(validDuration, (text) => checkDuration(text)),
      2000,
    );
  });

  test('formatDuration: every whole millisecond count reads back as itself', async (t) => {
    await check(
      t,
      import.meta.url,
      fc.property(fc.oneof(fc.nat({ max: 10_000_000 }), fc.integer({ min: 0, max: 2 ** 40 })), (ms) => {
        assert.equal(parseDuration(formatDuration(ms)), ms);
        assert.equal(formatDuration(ms + 0.4), formatDuration(ms));
      }),
      2000,
    );
  });

  test('formatDuration refuses what is not a finite non-negative number', async (t) => {
    await check(
      t,
      import.meta.url,
      fc.property(
        fc.oneof(fc.constantFrom(Number.NaN, Infinity, -Infinity), fc.double({ max: -Number.MIN_VALUE })),
        (ms) => {
          assert.throws(() => formatDuration(ms), RangeError);
        },
      ),
      300,
    );
  });

  test('formatDuration reads back for whole millisecond counts up to MAX_SAFE_INTEGER', async (t) => {
    await check(
      t,
      import.meta.url,
      fc.property(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), (ms) => {
        assert.equal(parseDuration(formatDuration(ms)), ms);
      }),
      2000,
    );
  });
});

describe('fuzz corpus: duration strings', () => {
  for (const [name, bytes] of corpusFiles('duration')) {
    test(name, () => {
      for (const line of bytes.toString('utf8').split('\n').filter(Boolean)) {
        checkDuration(JSON.parse(line) as string);
      }
    });
  }
});
