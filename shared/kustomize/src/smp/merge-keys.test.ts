import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { test } from 'node:test';
import { committedTable, freshTable, swaggerPath } from '../../../../hack/gen-merge-keys.ts';

const swagger = swaggerPath();

// The same comparison `node --import tsx hack/gen-merge-keys.ts --check` makes, run in-process to stay fast.
test('merge-keys.json matches the Kubernetes OpenAPI document it was generated from', {
  skip: existsSync(swagger) ? false : `skipped: ${swagger} is absent (go mod download k8s.io/kubernetes)`,
}, () => {
  const fresh = freshTable(swagger);
  assert.ok(fresh, 'no table was generated');
  assert.match(fresh, /"io\.k8s\.api\.core\.v1\.PodSpec"/);
  assert.ok(fresh.length < 300 * 1024, `the table is ${fresh.length} bytes; keep it under 300 KB`);
  assert.ok(
    committedTable() === fresh,
    'shared/kustomize/src/smp/merge-keys.json is stale: run node --import tsx hack/gen-merge-keys.ts',
  );
});
