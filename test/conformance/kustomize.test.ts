// Byte-for-byte conformance of Mooring's kustomize engine with the Go kustomize v5.8.0 on the fixtures in
// kustomize/ (expected outputs come from bin/kustomize via hack/gen-kustomize-conformance.ts).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { build, createConfinedFs, KustomizeError, toYAML } from '@mooring/kustomize';
import { createTwoFilesPatch } from 'diff';
import { FIXTURES_DIR, fixtureEntry, listFixtures } from './fixtures.ts';
import { readKnownGaps } from './known-gaps.ts';

const KNOWN_GAPS_FILE = join(FIXTURES_DIR, 'known-gaps.md');
const fixtures = listFixtures();
const knownGaps = readKnownGaps(KNOWN_GAPS_FILE);

type Outcome = { ok: true } | { ok: false; why: string };

/** Builds one fixture with Mooring and compares it with the Go binary's recorded result. */
async function runFixture(name: string): Promise<Outcome> {
  const dir = join(FIXTURES_DIR, name);
  const entry = fixtureEntry(dir);
  const expectedFile = join(dir, 'expected.yaml');
  const wantsError = existsSync(join(dir, 'expected-error.txt'));
  let actual: string;
  try {
    actual = toYAML(await build(createConfinedFs(join(dir, 'input')), entry));
  } catch (err) {
    const message = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    if (!wantsError) return { ok: false, why: `kustomize builds ${name} but Mooring failed: ${message}` };
    // Anything but a KustomizeError (a TypeError, a stack overflow) is a crash, not a refusal.
    if (!(err instanceof KustomizeError))
      return { ok: false, why: `Mooring crashed on ${name} instead of refusing it: ${message}` };
    return { ok: true };
  }
  if (wantsError) {
    const reason = readFileSync(join(dir, 'expected-error.txt'), 'utf8').trim();
    return { ok: false, why: `kustomize refuses ${name} (${reason}) but Mooring built it:\n${actual}` };
  }
  const expected = readFileSync(expectedFile, 'utf8');
  if (actual === expected) return { ok: true };
  const diff = createTwoFilesPatch(`${name}/expected.yaml`, 'mooring', expected, actual, '', '', {
    context: 3,
  });
  return { ok: false, why: `Mooring's output for ${name} differs from kustomize's:\n${diff}` };
}

test('known-gaps.md names only existing fixtures', () => {
  const unknown = [...knownGaps.keys()].filter((name) => !fixtures.includes(name));
  if (unknown.length > 0)
    throw new Error(`known-gaps.md lists fixtures that do not exist: ${unknown.join(', ')}.`);
});

test('the corpus has at least 120 fixtures, each with exactly one expectation', () => {
  if (fixtures.length < 120)
    throw new Error(`only ${fixtures.length} kustomize fixtures; at least 120 are required.`);
  for (const name of fixtures) {
    const dir = join(FIXTURES_DIR, name);
    const count = ['expected.yaml', 'expected-error.txt'].filter((f) => existsSync(join(dir, f))).length;
    if (count !== 1)
      throw new Error(
        `fixture ${name} needs exactly one of expected.yaml and expected-error.txt; regenerate it.`,
      );
  }
});

for (const name of fixtures) {
  const gap = knownGaps.get(name);
  test(`kustomize conformance: ${name}`, async (t) => {
    const outcome = await runFixture(name);
    if (gap === undefined) {
      if (!outcome.ok) throw new Error(outcome.why);
      return;
    }
    if (outcome.ok) throw new Error(`fixture ${name} passes now: remove it from known-gaps.md.`);
    // A listed gap passes while it still fails, its failure in the report; fixed, it fails above.
    t.diagnostic(`known gap (${gap}): ${outcome.why}`);
  });
}
