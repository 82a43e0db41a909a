// driftedFieldManagers: which managers own the fields a drift correction puts back (pure, tables).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { driftedFieldManagers } from './managed-fields.ts';
import type { Manifest } from './object-policy.ts';

const configMap = (data: Record<string, string>, managedFields: unknown[]): Manifest => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'app', namespace: 'ns', managedFields },
  data,
});

const mooring = { manager: 'mooring', operation: 'Apply', fieldsV1: { 'f:data': { 'f:greeting': {} } } };
const editor = { manager: 'kubectl-edit', operation: 'Update', fieldsV1: { 'f:data': { 'f:greeting': {} } } };
const other = { manager: 'labeller', operation: 'Update', fieldsV1: { 'f:data': { 'f:colour': {} } } };
const statusWriter = {
  manager: 'status-writer',
  operation: 'Update',
  subresource: 'status',
  fieldsV1: { 'f:data': { 'f:greeting': {} } },
};

test('names the managers owning the fields that differ, never our own or a status writer', () => {
  const cases: { why: string; live: Manifest; desired: Record<string, string>; want: string[] }[] = [
    {
      why: 'an edited field owned by kubectl-edit',
      live: configMap({ greeting: 'edited', colour: 'blue' }, [mooring, editor, other, statusWriter]),
      desired: { greeting: 'hello', colour: 'blue' },
      want: ['kubectl-edit'],
    },
    {
      why: 'two edited fields with two owners, sorted',
      live: configMap({ greeting: 'edited', colour: 'red' }, [editor, other]),
      desired: { greeting: 'hello', colour: 'blue' },
      want: ['kubectl-edit', 'labeller'],
    },
    {
      why: 'nothing differs',
      live: configMap({ greeting: 'hello' }, [mooring, editor]),
      desired: { greeting: 'hello' },
      want: [],
    },
    {
      why: 'the field is still ours alone',
      live: configMap({ greeting: 'edited' }, [mooring]),
      desired: { greeting: 'hello' },
      want: [],
    },
  ];
  for (const c of cases)
    assert.deepEqual(
      driftedFieldManagers(c.live, { ...c.live, data: c.desired } as Manifest, 'mooring'),
      c.want,
      c.why,
    );
});

test('owning any part of a changed list counts (list items are keyed in FieldsV1)', () => {
  const live: Manifest = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: 'app',
      managedFields: [
        {
          manager: 'kubectl-edit',
          operation: 'Update',
          fieldsV1: {
            'f:spec': { 'f:template': { 'f:spec': { 'f:containers': { 'k:{"name":"app"}': {} } } } },
          },
        },
      ],
    },
    spec: { template: { spec: { containers: [{ name: 'app', image: 'app:edited' }] } } },
  };
  const desired = {
    ...live,
    spec: { template: { spec: { containers: [{ name: 'app', image: 'app:1' }] } } },
  };
  assert.deepEqual(driftedFieldManagers(live, desired as Manifest, 'mooring'), ['kubectl-edit']);
});
