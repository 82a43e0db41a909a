import assert from 'node:assert/strict';
import { test } from 'node:test';
import { kindDefinition, NOTIFIABLE_KINDS } from '@mooring/api';
import { KIND_API_VERSIONS } from './kind-versions.ts';

test('KIND_API_VERSIONS covers exactly the notifiable kinds, each at the version it is served at', () => {
  assert.deepEqual(Object.keys(KIND_API_VERSIONS), [...NOTIFIABLE_KINDS]);
  for (const kind of NOTIFIABLE_KINDS) {
    const def = kindDefinition(kind);
    assert.equal(KIND_API_VERSIONS[kind], `${def.group}/${def.version}`);
  }
  assert.equal(KIND_API_VERSIONS.Kustomization, 'kustomize.mooring.dev/v1');
  assert.equal(KIND_API_VERSIONS.Alert, undefined);
});
