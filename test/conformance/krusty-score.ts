// Registers one test per scored krusty case and variant, scored against known-gaps.json: shared by
// krusty.test.ts (the cases without Helm, unit) and krusty-helm.test.ts (the cases that render a
// chart with bin/mooring-helm.wasm, integration).
import { test } from 'node:test';
import {
  type CaseRecord,
  hasCliVariant,
  type KnownGaps,
  type Outcome,
  runCase,
  type Variant,
} from './krusty-cases.ts';

const describe = (o: Outcome): string => (o.kind === 'pass' ? 'passes' : `${o.kind}: ${o.first}`);

/** One test per case and variant of `cases`. */
export function scoreCases(cases: CaseRecord[], gaps: KnownGaps): void {
  for (const rec of cases) {
    const variants: Variant[] = hasCliVariant(rec) ? ['fifo', 'cli'] : ['fifo'];
    for (const variant of variants) {
      const key = variant === 'fifo' ? rec.id : `${rec.id}#cli`;
      test(`krusty ${key}`, async (t) => {
        const { outcome } = await runCase(rec, variant);
        const gap = gaps[key];
        if (gap === undefined) {
          if (outcome.kind !== 'pass')
            throw new Error(`${key} ${describe(outcome)} (not in known-gaps.json)`);
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
}
