import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { addLabels, type LabelOptions } from './labels.ts';
import { objectsOf, resourcesFrom } from './test-resources.ts';

const DEPLOYMENT =
  'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  selector: {matchLabels: {app: d}}\n  template: {metadata: {labels: {app: d}}, spec: {containers: [{name: c}]}}';

describe('addLabels', () => {
  const cases: { name: string; input: string; options: LabelOptions; want: string }[] = [
    {
      name: 'commonLabels reach metadata, selector and template',
      input: DEPLOYMENT,
      options: { includeSelectors: true, includeTemplates: false },
      want: '- apiVersion: apps/v1\n  kind: Deployment\n  metadata: {name: d, labels: {env: prod}}\n  spec:\n    selector: {matchLabels: {app: d, env: prod}}\n    template: {metadata: {labels: {app: d, env: prod}}, spec: {containers: [{name: c}]}}',
    },
    {
      name: 'labels without selectors touch metadata only',
      input: DEPLOYMENT,
      options: { includeSelectors: false, includeTemplates: false },
      want: '- apiVersion: apps/v1\n  kind: Deployment\n  metadata: {name: d, labels: {env: prod}}\n  spec:\n    selector: {matchLabels: {app: d}}\n    template: {metadata: {labels: {app: d}}, spec: {containers: [{name: c}]}}',
    },
    {
      name: 'includeTemplates adds pod template labels but not selectors',
      input: DEPLOYMENT,
      options: { includeSelectors: false, includeTemplates: true },
      want: '- apiVersion: apps/v1\n  kind: Deployment\n  metadata: {name: d, labels: {env: prod}}\n  spec:\n    selector: {matchLabels: {app: d}}\n    template: {metadata: {labels: {app: d, env: prod}}, spec: {containers: [{name: c}]}}',
    },
    {
      name: 'a Service gets a selector created',
      input: 'apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {ports: [{port: 80}]}',
      options: { includeSelectors: true, includeTemplates: false },
      want: '- {apiVersion: v1, kind: Service, metadata: {name: s, labels: {env: prod}}, spec: {ports: [{port: 80}], selector: {env: prod}}}',
    },
    {
      name: 'a Job selector is only updated when present',
      input: 'apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec: {template: {spec: {}}}',
      options: { includeSelectors: true, includeTemplates: false },
      want: '- {apiVersion: batch/v1, kind: Job, metadata: {name: j, labels: {env: prod}}, spec: {template: {metadata: {labels: {env: prod}}, spec: {}}}}',
    },
    {
      name: 'custom fields are honoured',
      input: 'apiVersion: example.com/v1\nkind: Thing\nmetadata: {name: t}\nspec: {}',
      options: {
        includeSelectors: false,
        includeTemplates: false,
        fields: [{ path: 'spec/podLabels', kind: 'Thing', create: true }],
      },
      want: '- {apiVersion: example.com/v1, kind: Thing, metadata: {name: t, labels: {env: prod}}, spec: {podLabels: {env: prod}}}',
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const resources = resourcesFrom(c.input);
      addLabels(resources, { env: 'prod' }, c.options);
      assert.deepEqual(objectsOf(resources), parse(c.want));
    });
  }
});
