import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { addAnnotations } from './annotations.ts';
import { objectsOf, resourcesFrom } from './test-resources.ts';

describe('addAnnotations', () => {
  const cases: { name: string; input: string; want: string }[] = [
    {
      name: 'metadata of any kind',
      input: 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, annotations: {a: "1"}}',
      want: '- {apiVersion: v1, kind: ConfigMap, metadata: {name: c, annotations: {a: "1", note: "yes"}}}',
    },
    {
      name: 'pod templates of a CronJob, at both levels',
      input:
        'apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: c}\nspec: {jobTemplate: {spec: {template: {spec: {}}}}}',
      want: '- apiVersion: batch/v1\n  kind: CronJob\n  metadata: {name: c, annotations: {note: "yes"}}\n  spec: {jobTemplate: {metadata: {annotations: {note: "yes"}}, spec: {template: {metadata: {annotations: {note: "yes"}}, spec: {}}}}}',
    },
    {
      name: 'not the selector of a Service',
      input: 'apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {selector: {app: s}}',
      want: '- {apiVersion: v1, kind: Service, metadata: {name: s, annotations: {note: "yes"}}, spec: {selector: {app: s}}}',
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const resources = resourcesFrom(c.input);
      addAnnotations(resources, { note: 'yes' });
      assert.deepEqual(objectsOf(resources), parse(c.want));
    });
  }
});
