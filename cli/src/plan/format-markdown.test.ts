import assert from 'node:assert/strict';
import { test } from 'node:test';
import { planAsMarkdown } from './format-markdown.ts';
import type { ApplierPlan, Plan } from './make-plan.ts';

const longPatch = Array.from({ length: 400 }, (_, i) => `+  key${i}: value`).join('\n');

function plan(appliers: ApplierPlan[]): Plan {
  return {
    repo: '.',
    base: { ref: 'main', sha: 'a'.repeat(40) },
    head: { ref: 'HEAD', sha: 'b'.repeat(40) },
    source: 'GitRepository default/platform',
    changedFiles: ['apps/a.yaml'],
    appliers,
    unaffected: ['Kustomization/default/quiet'],
    otherSources: [],
    unreadable: [],
  };
}

const applier = (name: string, patch: string): ApplierPlan => ({
  kind: 'Kustomization',
  namespace: 'default',
  name,
  file: 'clusters/x.yaml',
  lifecycle: 'kept',
  changes: [{ id: `ConfigMap/apps/${name}`, change: 'changed', patch }],
  counts: { added: 0, changed: 1, deleted: 0 },
  prune: true,
  notes: [],
});

test('long diffs are cut, and a comment stays under the limit', () => {
  const md = planAsMarkdown(plan([applier('big', longPatch)]));
  assert.match(md, /… 250 more lines \(run mooring plan locally for the whole diff\)/);
  const many = plan(Array.from({ length: 80 }, (_, i) => applier(`app${i}`, longPatch)));
  const limited = planAsMarkdown(many, 60_000);
  assert.ok(limited.length <= 60_000, `${limited.length} characters`);
  assert.match(limited, /\| Kustomization default\/app79 \| 0 \| 1 \| 0 \| changes \|/);
  assert.match(limited, /Not affected \(not rendered\): `Kustomization\/default\/quiet`/);
});

test('a diff holding backticks gets a longer fence', () => {
  const md = planAsMarkdown(plan([applier('ticks', '+  script: ```echo```')]));
  assert.match(md, /````diff\n\+ {2}script: ```echo```\n````/);
});
