// biome-ignore-all lint/suspicious/noTemplateCurlyInString: Flux's ${var} syntax is the subject here, not a template mistake.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parse, stringify } from 'yaml';
import { SubstitutionError, substituteVariables } from './substitute.ts';
import { clearTemplates, REFERENCE, templateOf } from './substitute-template.ts';

// The oracle: Flux's substitution done literally, the whole object written as YAML, the text
// replaced, and parsed back (what substitute.ts did before templates, and still does as its fallback).
function literally(manifest: Record<string, unknown>, vars: Record<string, string>): unknown {
  const text = stringify(manifest, { lineWidth: 0 });
  if (!text.includes('${')) return manifest;
  return parse(
    text.replace(REFERENCE, (whole, escaped: string, body: string) => {
      if (escaped) return whole.slice(1);
      const m = /^([^:=-]*)(?:(:?[=-])([\s\S]*))?$/.exec(body)!;
      const value = vars[m[1]!];
      if (m[2] !== undefined)
        return (m[2].startsWith(':') ? !value : value === undefined) ? (m[3] ?? '') : value!;
      return value ?? '';
    }),
  );
}

const lax = { strict: false, strategy: 'Always' as const };

// Values that are numbers, booleans, nulls, or that break the YAML around them when pasted in.
const VALUES = [
  '0',
  '1m',
  '',
  'true',
  'False',
  'null',
  '~',
  'a: b',
  'x #y',
  '- a',
  '"q"',
  "'s'",
  'a\nb',
  '\t',
  ' lead',
  'trail ',
  '[1]',
  '{a: 1}',
  '*x',
  '&x',
  '!x',
  '%x',
  '@x',
  '`x',
  '0x1F',
  '1e3',
  '.inf',
  '-.5',
  '+1',
  '010',
  'yes',
  'on',
  'é',
  '\\',
  '\\n',
  '#',
  ':',
  '?',
  '-',
  '---',
  '...',
  'a:',
  'a,b',
  '|',
  '>',
  '\u0085',
  '\u2028',
  'Infinity',
  '12:30',
  '2026-12-07',
  '1_000',
  'podinfo-5',
  'a"b',
  "it's",
  '-1',
  '- ',
  '3.0',
  '0o17',
  '.5',
];
const STRINGS = [
  '${A}',
  'x-${A}',
  '${A}${B}',
  '${A}: x',
  "it's ${A}",
  '${A} #c',
  ' ${A}',
  '${A}\n${B}',
  'a\\${A}',
  '$${A}',
  '${A:=def}',
  '${UNSET:-0}',
  '${UNSET:=x: y}',
  '${B=}',
  '${A',
  'plain',
  '"${A}"',
  "'${B}'",
  '${A}-${UNSET}',
  '- ${A}',
  '${A}\t',
  'tab\t${B}',
  '#${A}',
  '${A}:',
  'x: ${A}',
];

function pick<T>(rand: () => number, xs: readonly T[]): T {
  return xs[Math.floor(rand() * xs.length)]!;
}

function randomValue(rand: () => number, depth: number): unknown {
  const r = rand();
  if (depth > 2 || r < 0.5)
    return rand() < 0.85 ? pick(rand, STRINGS) : pick(rand, [1, 2.5, true, null, -0, 0]);
  if (r < 0.7) return Array.from({ length: Math.floor(rand() * 4) }, () => randomValue(rand, depth + 1));
  const obj: Record<string, unknown> = {};
  for (let i = Math.floor(rand() * 4); i > 0; i--)
    obj[rand() < 0.15 ? pick(rand, STRINGS) : `k${Math.floor(rand() * 6)}`] = randomValue(rand, depth + 1);
  return obj;
}

// A small deterministic generator (mulberry32): the same cases every run.
function seeded(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

test('substituting through templates gives what substituting the whole text gives, on 8,000 random objects', () => {
  clearTemplates();
  const rand = seeded(21);
  let viaSlots = 0;
  for (let i = 0; i < 8_000; i++) {
    const manifest = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'cm' },
      data: randomValue(rand, 0),
    };
    const vars: Record<string, string> = { A: pick(rand, VALUES), B: pick(rand, VALUES) };
    let want: unknown;
    let wantError = false;
    try {
      want = literally(manifest, vars);
    } catch {
      wantError = true;
    }
    // Twice: the first analyses the text, the second comes from the cache.
    for (let round = 0; round < 2; round++) {
      let got: unknown;
      try {
        got = substituteVariables(manifest, vars, lax, 'ConfigMap/cm');
      } catch (err) {
        assert.ok(
          wantError,
          `case ${i}: ${(err as Error).message}\n${stringify(manifest)}\n${JSON.stringify(vars)}`,
        );
        assert.ok(err instanceof SubstitutionError);
        continue;
      }
      assert.ok(
        !wantError,
        `case ${i}: the whole text does not parse, the templates did\n${stringify(manifest)}`,
      );
      assert.deepEqual(got, want, `case ${i}\n${stringify(manifest)}\n${JSON.stringify(vars)}`);
    }
    if (templateOf(manifest).slots) viaSlots++;
  }
  // Not everything falls back to the full parse: most random objects are substituted by slots.
  assert.ok(viaSlots > 3_000, `only ${viaSlots} of 8,000 took the template path`);
});

test('a substituted object is a copy: substituting again, or changing the result, leaves the next result alone', () => {
  clearTemplates();
  const manifest = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'cm-${A}' },
    data: { n: '${A}' },
  };
  const first = substituteVariables(manifest, { A: '1' }, lax, 'ConfigMap/cm');
  (first.metadata as Record<string, unknown>).name = 'changed';
  const second = substituteVariables(manifest, { A: '2' }, lax, 'ConfigMap/cm');
  assert.deepEqual(second, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'cm-2' },
    data: { n: 2 },
  });
  assert.equal(manifest.metadata.name, 'cm-${A}');
});

test('objects that JSON writes alike but YAML does not get templates of their own', () => {
  clearTemplates();
  const a = { kind: 'X', metadata: { name: '${A}' }, v: Number.NaN };
  const b = { kind: 'X', metadata: { name: '${A}' }, v: null };
  const c = { kind: 'X', metadata: { name: '${A}' }, v: '\u0000nNaN' };
  assert.ok(Number.isNaN(substituteVariables(a, { A: 'x' }, lax, 'X/a').v));
  assert.equal(substituteVariables(b, { A: 'x' }, lax, 'X/b').v, null);
  assert.equal(substituteVariables(c, { A: 'x' }, lax, 'X/c').v, '\u0000nNaN');
  assert.ok(Object.is(substituteVariables({ ...b, v: -0 }, { A: 'x' }, lax, 'X/d').v, -0));
});
