import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { addNamePrefixSuffix } from './name-prefix-suffix.ts';
import { applyReplacements, type Replacement, splitReplacementPath } from './replacements.ts';
import { objectsOf, resourcesFrom } from './test-resources.ts';

const BASE = `apiVersion: v1
kind: ConfigMap
metadata: {name: env, labels: {role: source}}
data: {host: db.example.com, port: "5432", url: "postgres://db:5432/app"}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, labels: {app: web}}
spec:
  replicas: 1
  template:
    spec:
      containers:
      - name: app
        image: nginx
        env: [{name: HOST, value: x}, {name: PORT, value: "0"}]
      - name: sidecar
        image: busybox
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: worker, labels: {app: worker}}
spec: {replicas: 2}
`;

function run(replacements: Replacement[]) {
  const resources = resourcesFrom(BASE);
  applyReplacements(resources, replacements);
  return objectsOf(resources);
}

describe('splitReplacementPath', () => {
  const cases: [string, string[]][] = [
    ['metadata.name', ['metadata', 'name']],
    [
      'spec.containers.[name=com.example.app].image',
      ['spec', 'containers', '[name=com.example.app]', 'image'],
    ],
    ['metadata.annotations.[example.com/key]', ['metadata', 'annotations', 'example.com/key']],
    ['data.config\\.json', ['data', 'config.json']],
  ];
  for (const [path, want] of cases) it(path, () => assert.deepEqual(splitReplacementPath(path), want));
});

describe('applyReplacements', () => {
  const cases: { name: string; replacements: Replacement[]; pick: number; want: string }[] = [
    {
      name: 'into a list element matched by key, with a wildcard elsewhere',
      replacements: [
        {
          source: { kind: 'ConfigMap', name: 'env', fieldPath: 'data.host' },
          targets: [
            {
              select: { kind: 'Deployment', name: 'web' },
              fieldPaths: ['spec.template.spec.containers.[name=app].env.[name=HOST].value'],
            },
          ],
        },
        {
          source: { kind: 'ConfigMap', fieldPath: 'data.host' },
          targets: [{ select: { name: 'web' }, fieldPaths: ['spec.template.spec.containers.*.image'] }],
        },
      ],
      pick: 1,
      want: 'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, labels: {app: web}}\nspec:\n  replicas: 1\n  template:\n    spec:\n      containers:\n      - {name: app, image: db.example.com, env: [{name: HOST, value: db.example.com}, {name: PORT, value: "0"}]}\n      - {name: sidecar, image: db.example.com}',
    },
    {
      name: 'a string into a number keeps the number type',
      replacements: [
        {
          source: { kind: 'ConfigMap', fieldPath: 'data.port' },
          targets: [{ select: { name: 'worker' }, fieldPaths: ['spec.replicas'] }],
        },
      ],
      pick: 2,
      want: 'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: worker, labels: {app: worker}}\nspec: {replicas: 5432}',
    },
    {
      name: 'delimiter and index on source and target',
      replacements: [
        {
          source: { kind: 'ConfigMap', fieldPath: 'data.url', options: { delimiter: '/', index: 2 } },
          targets: [
            {
              select: { name: 'web' },
              fieldPaths: ['spec.template.spec.containers.[name=sidecar].image'],
              options: { delimiter: ':', index: 1 },
            },
          ],
        },
      ],
      pick: 1,
      want: 'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, labels: {app: web}}\nspec:\n  replicas: 1\n  template:\n    spec:\n      containers:\n      - {name: app, image: nginx, env: [{name: HOST, value: x}, {name: PORT, value: "0"}]}\n      - {name: sidecar, image: "busybox:db:5432"}',
    },
    {
      name: 'create makes missing fields; reject by name and by label',
      replacements: [
        {
          source: { kind: 'ConfigMap', fieldPath: 'data.host' },
          targets: [
            {
              select: { kind: 'Deployment' },
              reject: [{ name: 'web' }],
              fieldPaths: ['metadata.annotations.host'],
              options: { create: true },
            },
            {
              select: { kind: 'Deployment' },
              reject: [{ labelSelector: 'app=worker' }],
              fieldPaths: ['metadata.annotations.other'],
              options: { create: true },
            },
          ],
        },
      ],
      pick: 2,
      want: 'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: worker, labels: {app: worker}, annotations: {host: db.example.com}}\nspec: {replicas: 2}',
    },
  ];
  for (const c of cases) {
    it(c.name, () => assert.deepEqual(run(c.replacements)[c.pick], parse(c.want)));
  }

  it('selects source and targets by a name they had before a prefix', () => {
    const resources = resourcesFrom(BASE);
    addNamePrefixSuffix(resources, 'p-');
    applyReplacements(resources, [
      {
        source: { kind: 'ConfigMap', name: 'env' },
        targets: [
          { select: { name: 'worker' }, fieldPaths: ['metadata.labels.cm'], options: { create: true } },
        ],
      },
    ]);
    assert.deepEqual(objectsOf(resources)[2]!.metadata, {
      name: 'p-worker',
      labels: { app: 'worker', cm: 'p-env' },
    });
  });

  it('a reject matching a previous name rules the resource out', () => {
    const resources = resourcesFrom(BASE);
    addNamePrefixSuffix(resources, 'p-');
    applyReplacements(resources, [
      {
        source: { kind: 'ConfigMap', fieldPath: 'data.port' },
        targets: [
          { select: { kind: 'Deployment' }, reject: [{ name: 'web' }], fieldPaths: ['spec.replicas'] },
        ],
      },
    ]);
    assert.deepEqual(
      objectsOf(resources).map((o) => (o.spec as { replicas?: number } | undefined)?.replicas),
      [undefined, 1, 5432],
    );
  });

  it('a created field reads the text afresh, so "8080" becomes a number', () => {
    const [, web] = run([
      {
        source: { kind: 'ConfigMap', fieldPath: 'data.port' },
        targets: [{ select: { name: 'web' }, fieldPaths: ['spec.made.port'], options: { create: true } }],
      },
    ]);
    assert.deepEqual((web!.spec as { made: unknown }).made, { port: 5432 });
  });

  const failures: { name: string; replacements: Replacement[]; error: RegExp }[] = [
    {
      name: 'missing target field without create',
      replacements: [
        {
          source: { kind: 'ConfigMap' },
          targets: [{ select: { name: 'worker' }, fieldPaths: ['spec.nope'] }],
        },
      ],
      error: /unable to find field "spec.nope" in replacement target/,
    },
    {
      name: 'ambiguous source',
      replacements: [{ source: { kind: 'Deployment' }, targets: [{ select: { name: 'worker' } }] }],
      error: /multiple matches for selector kind=Deployment/,
    },
    {
      name: 'no source',
      replacements: [{ source: { kind: 'Secret' }, targets: [{ select: { name: 'worker' } }] }],
      error: /nothing selected by kind=Secret/,
    },
    {
      name: 'missing source field',
      replacements: [
        { source: { kind: 'ConfigMap', fieldPath: 'data.none' }, targets: [{ select: { name: 'worker' } }] },
      ],
      error: /fieldPath `data.none` is missing for replacement source/,
    },
    {
      name: 'no targets',
      replacements: [{ source: { kind: 'ConfigMap' } }],
      error: /replacements must specify a source and at least one target/,
    },
    {
      name: 'source index out of bounds',
      replacements: [
        {
          source: { kind: 'ConfigMap', fieldPath: 'data.host', options: { delimiter: '.', index: 9 } },
          targets: [{ select: { name: 'worker' } }],
        },
      ],
      error: /options.index 9 is out of bounds/,
    },
  ];
  for (const f of failures) it(`fails: ${f.name}`, () => assert.throws(() => run(f.replacements), f.error));
});
