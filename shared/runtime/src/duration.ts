// Go duration strings in the subset the CRDs validate (`DURATION_PATTERN` in @mooring/api):
// one or more `<number><unit>` terms, units h, m, s, ms, e.g. `1m30s`, `1.5h`, `500ms`.

const UNIT_MICROS: Record<string, bigint> = { h: 3_600_000_000n, m: 60_000_000n, s: 1_000_000n, ms: 1_000n };
const WHOLE = /^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$/;
const TERM = /([0-9]+(?:\.[0-9]+)?)(ms|s|m|h)/g;

/** Parses a Go duration (`1m30s`, `500ms`, `1h`) to milliseconds; throws a RangeError on bad syntax. */
export function parseDuration(text: string): number {
  if (!WHOLE.test(text)) {
    throw new RangeError(
      `invalid duration ${JSON.stringify(text)}: use numbers with units h, m, s or ms, like 30s, 1m30s or 500ms`,
    );
  }
  // Summed exactly (BigInt, every term scaled by the longest fraction) and rounded to a microsecond
  // once: floating-point terms drifted past ~1e13 ms, so a long duration formatDuration wrote did
  // not read back as itself.
  const terms = [...text.matchAll(TERM)].map(([, value, unit]) => {
    const [whole = '0', fraction = ''] = value!.split('.');
    return { whole, fraction, unit: UNIT_MICROS[unit!]! };
  });
  const digits = Math.max(0, ...terms.map((t) => t.fraction.length));
  const scale = 10n ** BigInt(digits);
  let scaled = 0n;
  for (const t of terms) scaled += BigInt(t.whole + t.fraction.padEnd(digits, '0')) * t.unit;
  const micros = (scaled * 2n + scale) / (2n * scale);
  const wholeMs = micros / 1000n;
  if (wholeMs > BigInt(Number.MAX_SAFE_INTEGER))
    throw new RangeError(`duration ${JSON.stringify(text)} is too long`);
  return Number(wholeMs) + Number(micros % 1000n) / 1000;
}

/** True when `text` is a duration `parseDuration` accepts. */
export function isDuration(text: string): boolean {
  try {
    parseDuration(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * Formats milliseconds the way Go's `time.Duration.String` does, limited to units `parseDuration`
 * reads back: `0s`, `500ms`, `1.5s`, `1m30s`, `1h0m0s`. Sub-millisecond parts are rounded away.
 */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0)
    throw new RangeError(`cannot format duration ${ms}: not a finite, non-negative number`);
  const total = Math.round(ms);
  if (total === 0) return '0s';
  if (total < 1_000) return `${total}ms`;
  const hours = Math.floor(total / 3_600_000);
  const minutes = Math.floor((total % 3_600_000) / 60_000);
  const millis = total % 60_000;
  const whole = Math.floor(millis / 1_000);
  const frac = millis % 1_000;
  const seconds = frac === 0 ? `${whole}` : `${whole}.${String(frac).padStart(3, '0').replace(/0+$/, '')}`;
  if (hours > 0) return `${hours}h${minutes}m${seconds}s`;
  if (minutes > 0) return `${minutes}m${seconds}s`;
  return `${seconds}s`;
}
