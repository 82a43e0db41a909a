// How Go (inside sops) prints the scalars the MAC hashes; JS prints some of them differently.

/** Go's strconv.FormatFloat(f, 'f', -1, 64): the shortest round-trip digits, never an exponent. */
export function formatFloat(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (n === Number.POSITIVE_INFINITY) return '+Inf';
  if (n === Number.NEGATIVE_INFINITY) return '-Inf';
  if (Object.is(n, -0)) return '-0';
  const s = String(n);
  const m = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(s);
  if (!m) return s;
  const digits = m[2]! + (m[3] ?? '');
  const point = 1 + Number(m[4]);
  if (point <= 0) return `${m[1]}0.${'0'.repeat(-point)}${digits}`;
  if (point >= digits.length) return `${m[1]}${digits}${'0'.repeat(point - digits.length)}`;
  return `${m[1]}${digits.slice(0, point)}.${digits.slice(point)}`;
}

/**
 * A YAML plain timestamp as sops hashes it: yaml.v3 reads it as time.Time and sops hashes
 * MarshalText (RFC 3339 with nanoseconds, trailing zeros trimmed, UTC as `Z`).
 */
export function goTimestamp(text: string): string | undefined {
  const m =
    /^(\d{4})-(\d\d?)-(\d\d?)(?:(?:[Tt]|[ \t]+)(\d\d?):(\d\d):(\d\d)(?:\.(\d+))?[ \t]*(Z|[+-]\d\d?(?::?\d\d)?)?)?$/.exec(
      text,
    );
  if (!m) return undefined;
  const pad = (s: string | undefined) => (s ?? '0').padStart(2, '0');
  const frac = (m[7] ?? '').slice(0, 9).replace(/0+$/, '');
  let zone = m[8] ?? 'Z';
  if (zone !== 'Z') {
    const z = /^([+-])(\d\d?)(?::?(\d\d))?$/.exec(zone)!;
    zone = Number(z[2]) === 0 && Number(z[3] ?? 0) === 0 ? 'Z' : `${z[1]}${pad(z[2])}:${z[3] ?? '00'}`;
  }
  return `${m[1]}-${pad(m[2])}-${pad(m[3])}T${pad(m[4])}:${pad(m[5])}:${pad(m[6])}${frac ? `.${frac}` : ''}${zone}`;
}
