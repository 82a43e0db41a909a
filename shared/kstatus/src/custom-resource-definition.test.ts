import assert from 'node:assert/strict';
import { test } from 'node:test';
import { customResourceDefinitionStatus } from './custom-resource-definition.ts';
import type { LiveObject } from './result.ts';

const crd = (conditions: LiveObject[]): LiveObject => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.example.com', generation: 1 },
  spec: { group: 'example.com', names: { kind: 'Widget', plural: 'widgets' }, scope: 'Namespaced' },
  status: { conditions },
});

const accepted = { type: 'NamesAccepted', status: 'True', reason: 'NoConflicts' };

const cases: { name: string; conditions: LiveObject[]; want: string; reason?: string }[] = [
  {
    name: 'established',
    conditions: [accepted, { type: 'Established', status: 'True', reason: 'InitialNamesAccepted' }],
    want: 'Current',
  },
  {
    name: 'with conflicting names',
    conditions: [
      {
        type: 'NamesAccepted',
        status: 'False',
        reason: 'ListKindConflict',
        message: 'WidgetList is already in use',
      },
      { type: 'Established', status: 'False', reason: 'NotAccepted' },
    ],
    want: 'Failed',
    reason: 'ListKindConflict',
  },
  {
    name: 'installing',
    conditions: [accepted, { type: 'Established', status: 'False', reason: 'Installing' }],
    want: 'InProgress',
    reason: 'Installing',
  },
  {
    name: 'not established for another reason',
    conditions: [accepted, { type: 'Established', status: 'False', reason: 'NotAccepted' }],
    want: 'Failed',
  },
  { name: 'without conditions yet', conditions: [], want: 'InProgress', reason: 'Installing' },
];

for (const c of cases) {
  test(`CustomResourceDefinition ${c.name} is ${c.want}`, () => {
    const result = customResourceDefinitionStatus(crd(c.conditions));
    assert.equal(result.status, c.want, result.message);
    if (c.reason) assert.equal(result.reason, c.reason);
  });
}
