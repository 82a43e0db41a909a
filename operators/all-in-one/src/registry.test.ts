import assert from 'node:assert/strict';
import { test } from 'node:test';
import { selectOperators } from './registry.ts';

const known = ['source', 'kustomize', 'notification', 'image-automation'];

test('--only picks operators by name and refuses unknown ones', () => {
  assert.deepEqual(selectOperators(undefined, known), known);
  assert.deepEqual(selectOperators('source, kustomize', known), ['source', 'kustomize']);
  assert.throws(() => selectOperators('source,helm', known), /unknown operator helm: choose from source/);
  assert.throws(() => selectOperators(undefined, []), /no operator is registered/);
});
