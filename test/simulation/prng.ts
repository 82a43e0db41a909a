/**
 * The simulation's only source of randomness: mulberry32, a small 32-bit PRNG, seeded per stream so
 * one seed gives one run. Independent streams (scenario, faults, the runtime's Math.random) are
 * derived from the seed so that, say, one more request does not change which revisions are pushed.
 */

/** A 32-bit integer hash (splitmix32's finaliser), to derive stream seeds from one seed. */
export function mix32(...parts: number[]): number {
  let h = 0x9e3779b9;
  for (const p of parts) {
    h = Math.imul(h ^ (p >>> 0), 0x85ebca6b) >>> 0;
    h ^= h >>> 13;
    h = Math.imul(h, 0xc2b2ae35) >>> 0;
    h ^= h >>> 16;
  }
  return h >>> 0;
}

export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export class Rng {
  readonly next: () => number;

  constructor(seed: number) {
    this.next = mulberry32(seed);
  }

  /** An integer in [lo, hi], both included. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  chance(p: number): boolean {
    return p > 0 && this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from an empty list');
    return items[Math.floor(this.next() * items.length)]!;
  }

  /** Items in a random order (Fisher–Yates on a copy). */
  shuffle<T>(items: readonly T[]): T[] {
    const out = [...items];
    for (let i = out.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1));
      [out[i], out[j]] = [out[j]!, out[i]!];
    }
    return out;
  }

  hex(chars: number): string {
    let s = '';
    while (s.length < chars)
      s += Math.floor(this.next() * 0x100000000)
        .toString(16)
        .padStart(8, '0');
    return s.slice(0, chars);
  }
}
