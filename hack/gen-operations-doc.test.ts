import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { operationsDoc } from './gen-operations-doc.ts';
import { repoRoot } from './lib/control-plane.ts';

test('docs/operations.md lists the current flags and metrics', () => {
  const committed = readFileSync(join(repoRoot, 'docs/operations.md'), 'utf8');
  assert.ok(
    committed === operationsDoc(),
    'docs/operations.md is stale: run node --import tsx hack/gen-operations-doc.ts',
  );
  assert.match(committed, /--leader-elect/);
  assert.match(committed, /mooring_reconcile_duration_seconds/);
});
