// Mooring's engine on kustomize's own krusty test cases (api/krusty/*_test.go at kustomize v5.8.0,
// dumped by hack/gen-krusty-cases.ts into krusty/cases/). Every scored case is built twice: with
// the case's options (the harness default is input order, `sortOptions: {order: fifo}` here) and
// with the CLI's default order (legacy), and compared with kustomize's result. A failure must be
// listed in krusty/known-gaps.json with its category; a listed case that passes fails too, so the
// list stays true (`node --import tsx hack/krusty-report.ts --write` rewrites it).
import { test } from 'node:test';
import {
  hasCliVariant,
  type Outcome,
  readIndex,
  readKnownGaps,
  runCase,
  scoredCases,
  type Variant,
} from './krusty-cases.ts';

const gaps = readKnownGaps();
const cases = scoredCases();

test('the krusty corpus is there and known-gaps.json names only scored cases', () => {
  const all = readIndex().cases;
  if (all.length < 300)
    throw new Error(`only ${all.length} krusty cases; regenerate with hack/gen-krusty-cases.ts`);
  const keys = new Set(cases.flatMap((c) => [c.id, `${c.id}#cli`]));
  const unknown = Object.keys(gaps).filter((k) => !keys.has(k));
  if (unknown.length > 0)
    throw new Error(`known-gaps.json lists cases that are not scored: ${unknown.slice(0, 10).join(', ')}`);
});

const describe = (o: Outcome): string => (o.kind === 'pass' ? 'passes' : `${o.kind}: ${o.first}`);

for (const rec of cases) {
  const variants: Variant[] = hasCliVariant(rec) ? ['fifo', 'cli'] : ['fifo'];
  for (const variant of variants) {
    const key = variant === 'fifo' ? rec.id : `${rec.id}#cli`;
    test(`krusty ${key}`, async (t) => {
      const { outcome } = await runCase(rec, variant);
      const gap = gaps[key];
      if (gap === undefined) {
        if (outcome.kind !== 'pass') throw new Error(`${key} ${describe(outcome)} (not in known-gaps.json)`);
        return;
      }
      if (outcome.kind === 'pass') throw new Error(`${key} passes now: remove it from known-gaps.json`);
      if (outcome.kind !== gap.category)
        throw new Error(
          `${key} is listed as ${gap.category} but ${describe(outcome)}: update known-gaps.json`,
        );
      // Still failing in the listed way: the gap is reported, and closing it fails above.
      t.diagnostic(`known gap: ${describe(outcome)}`);
    });
  }
}
