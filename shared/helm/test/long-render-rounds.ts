// Run by renderer-crash.test.ts in a Node process of its own, with V8's default tiers (the test
// runner's --liftoff-only made the crash it guards against 10 times rarer): rounds of two renders
// in a warm renderer and then a template that loops until the time limit. Prints one line per
// round; a crash ends the process with a signal before the last.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { HelmRendererPool, HelmTimeoutError, renderChart } from '../src/index.ts';
import { TESTDATA } from './helm-oracle.ts';

const rounds = Number(process.argv[2] ?? 3);
const roomy = { timeoutMs: 120_000, memoryBytes: 1 << 30 };
for (let round = 1; round <= rounds; round++) {
  const pool = new HelmRendererPool({ size: 1 });
  const render = (chartDir: string, limits = roomy) =>
    renderChart({ chartDir, releaseName: 'r', namespace: 'n', limits, pool });
  try {
    await render(join(TESTDATA, 'leftover-a'));
    await render(join(TESTDATA, 'leftover-b'));
    const started = pool.started;
    await assert.rejects(
      render(join(TESTDATA, 'hostile/loop'), { ...roomy, timeoutMs: 4_000 }),
      HelmTimeoutError,
    );
    assert.equal(pool.started, started, 'the long render ran in a renderer of its own, not the reused one');
    assert.match(await render(join(TESTDATA, 'hostile/escape')), /name: escape/);
  } finally {
    pool.close();
  }
  console.log(`round ${round} of ${rounds}: timed out as asked, the next render succeeded`);
}
