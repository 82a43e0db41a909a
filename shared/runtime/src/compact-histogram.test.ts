import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Histogram, Registry } from 'prom-client';
import { CompactHistogram } from './compact-histogram.ts';

const buckets = [0.1, 1, 10];
const labelNames = ['kind', 'name', 'namespace'] as const;

/** The same observations in prom-client's Histogram and in CompactHistogram, each in a registry of its own. */
function both() {
  const theirs = new Registry();
  const ours = new Registry();
  const opts = {
    name: 'gotk_reconcile_duration_seconds',
    help: 'Time one reconcile took.',
    labelNames,
    buckets,
  };
  const reference = new Histogram({ ...opts, labelNames: [...labelNames], registers: [theirs] });
  const compact = new CompactHistogram({ ...opts, registers: [ours] });
  return {
    observe(labels: Record<(typeof labelNames)[number], string>, value: number) {
      reference.observe(labels, value);
      compact.observe(labels, value);
    },
    remove(labels: Record<(typeof labelNames)[number], string>) {
      reference.remove(labels);
      compact.remove(labels);
    },
    theirs,
    ours,
    compact,
  };
}

const web = { kind: 'Kustomization', name: 'web', namespace: 'apps' };
const db = { kind: 'Kustomization', name: 'db', namespace: 'data' };

describe('CompactHistogram', () => {
  it("prints and exports as JSON exactly what prom-client's Histogram does", async () => {
    const h = both();
    for (const v of [0.05, 0.1, 0.5, 3, 10, 11, 1000]) h.observe(web, v);
    h.observe(db, 0.2);
    // Labels given in another order, and with a value that needs escaping, name the same series.
    h.observe({ namespace: 'apps', name: 'web', kind: 'Kustomization' }, 2);
    h.observe({ kind: 'Kustomization', name: 'q"uote\\d\n', namespace: 'apps' }, 0.01);
    assert.equal(await h.ours.metrics(), await h.theirs.metrics());
    assert.deepEqual(await h.ours.getMetricsAsJSON(), await h.theirs.getMetricsAsJSON());
    assert.match(
      await h.ours.metrics(),
      /^gotk_reconcile_duration_seconds_count\{kind="Kustomization",name="web",namespace="apps"\} 8$/m,
    );
  });

  it('forgets a removed series, and everything on reset', async () => {
    const h = both();
    h.observe(web, 1);
    h.observe(db, 1);
    h.remove(web);
    assert.equal(await h.ours.metrics(), await h.theirs.metrics());
    assert.doesNotMatch(await h.ours.metrics(), /name="web"/);
    h.ours.resetMetrics();
    assert.doesNotMatch(await h.ours.metrics(), /_count/);
  });
});
