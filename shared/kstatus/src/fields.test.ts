import assert from 'node:assert/strict';
import { test } from 'node:test';
import { conditions, groupKind, intField, stringField } from './fields.ts';

test('groupKind keys the core group by kind alone', () => {
  assert.equal(groupKind({ apiVersion: 'v1', kind: 'Pod' }), 'Pod');
  assert.equal(groupKind({ apiVersion: 'apps/v1', kind: 'Deployment' }), 'apps/Deployment');
  assert.equal(
    groupKind({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition' }),
    'apiextensions.k8s.io/CustomResourceDefinition',
  );
});

test('intField falls back on missing, fractional and non-number values', () => {
  const obj = { spec: { replicas: 3, half: 1.5, text: '3' } };
  assert.equal(intField(obj, 'spec.replicas', 1), 3);
  assert.equal(intField(obj, 'spec.half', 1), 1);
  assert.equal(intField(obj, 'spec.text', 1), 1);
  assert.equal(intField(obj, 'status.replicas', 0), 0);
  assert.equal(intField({ spec: null } as Record<string, unknown>, 'spec.replicas', 7), 7);
});

test('stringField falls back on non-strings', () => {
  assert.equal(stringField({ status: { phase: 'Bound' } }, 'status.phase'), 'Bound');
  assert.equal(stringField({ status: { phase: 1 } }, 'status.phase', 'x'), 'x');
});

test('conditions keeps only well-formed entries', () => {
  const got = conditions({
    status: { conditions: [{ type: 'Ready', status: 'True' }, { type: 'X' }, 'junk'] },
  });
  assert.deepEqual(
    got.map((c) => c.type),
    ['Ready'],
  );
  assert.deepEqual(conditions({ status: { conditions: 'nope' } }), []);
});
