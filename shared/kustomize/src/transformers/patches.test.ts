import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { addNamePrefixSuffix } from './name-prefix-suffix.ts';
import { applyPatches, type PatchInput } from './patches.ts';
import { objectsOf, resourcesFrom } from './test-resources.ts';

const BASE = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, labels: {app: web, tier: front}}
spec:
  replicas: 1
  template:
    spec:
      containers: [{name: app, image: nginx}, {name: side, image: busybox}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: api, labels: {app: api}, annotations: {team: core}}
spec: {replicas: 1}
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec: {ports: [{port: 80}]}
`;

const SET_REPLICAS_SMP = 'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: any}\nspec: {replicas: 3}';
const SET_REPLICAS_JSON = '[{"op": "replace", "path": "/spec/replicas", "value": 3}]';

function replicasAfter(patch: PatchInput): number[] {
  const resources = resourcesFrom(BASE);
  applyPatches(resources, [patch], {});
  return resources
    .filter((r) => r.object.kind === 'Deployment')
    .map((r) => (r.object.spec as { replicas: number }).replicas);
}

describe('applyPatches target selection', () => {
  const cases: { name: string; input: PatchInput; want: number[] }[] = [
    {
      name: 'kind',
      input: { patch: SET_REPLICAS_JSON, target: { kind: 'Deployment' }, source: 'inline' },
      want: [3, 3],
    },
    {
      name: 'name is an anchored regex',
      input: { patch: SET_REPLICAS_JSON, target: { name: 'we' }, source: 'inline' },
      want: [1, 1],
    },
    {
      name: 'name alternatives',
      input: { patch: SET_REPLICAS_JSON, target: { kind: 'Deployment', name: 'web|api' }, source: 'inline' },
      want: [3, 3],
    },
    {
      name: 'group and version',
      input: {
        patch: SET_REPLICAS_JSON,
        target: { group: 'apps', version: 'v1', name: 'api' },
        source: 'inline',
      },
      want: [1, 3],
    },
    {
      name: 'label selector',
      input: { patch: SET_REPLICAS_SMP, target: { labelSelector: 'app in (web), tier' }, source: 'p.yaml' },
      want: [3, 1],
    },
    {
      name: 'annotation selector',
      input: { patch: SET_REPLICAS_SMP, target: { annotationSelector: 'team=core' }, source: 'p.yaml' },
      want: [1, 3],
    },
    {
      name: 'namespace default matches an unset namespace',
      input: {
        patch: SET_REPLICAS_JSON,
        target: { namespace: 'default', name: 'web', kind: 'Deployment' },
        source: 'inline',
      },
      want: [3, 1],
    },
  ];
  for (const c of cases) it(c.name, () => assert.deepEqual(replicasAfter(c.input), c.want));
});

describe('applyPatches strategic merge', () => {
  it('merges containers by name and keeps the target name without allowNameChange', () => {
    const resources = resourcesFrom(BASE);
    applyPatches(
      resources,
      [
        {
          patch:
            'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: renamed}\nspec: {template: {spec: {containers: [{name: side, image: busybox:2}]}}}',
          target: { name: 'web', kind: 'Deployment' },
          source: 'inline',
        },
      ],
      {},
    );
    const web = objectsOf(resources)[0]!;
    assert.deepEqual(web.metadata, { name: 'web', labels: { app: 'web', tier: 'front' } });
    // Element order inside the list is the SMP engine's business; the merge by name is ours to check.
    const containers = (web.spec as { template: { spec: { containers: { name: string; image: string }[] } } })
      .template.spec.containers;
    assert.deepEqual(containers.map((c) => `${c.name}=${c.image}`).sort(), ['app=nginx', 'side=busybox:2']);
  });

  it('renames with allowNameChange and records the old id', () => {
    const resources = resourcesFrom(BASE);
    applyPatches(
      resources,
      [
        {
          patch: 'kind: Service\nmetadata: {name: front}',
          target: { kind: 'Service' },
          options: { allowNameChange: true },
          source: 'inline',
        },
      ],
      {},
    );
    const svc = resources[2]!;
    assert.equal((svc.object.metadata as { name: string }).name, 'front');
    assert.deepEqual(
      svc.previousIds.map((id) => id.name),
      ['web'],
    );
  });

  it('applies each document of an untargeted patch to the resource with its id', () => {
    const resources = resourcesFrom(BASE);
    applyPatches(
      resources,
      [
        {
          patch:
            'apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {type: NodePort}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: api}\nspec: {replicas: 7}',
          source: 'p.yaml',
        },
      ],
      {},
    );
    assert.equal((resources[2]!.object.spec as { type: string }).type, 'NodePort');
    assert.equal((resources[1]!.object.spec as { replicas: number }).replicas, 7);
  });

  it('finds an untargeted patch target by a name it had before a prefix', () => {
    const resources = resourcesFrom(BASE);
    addNamePrefixSuffix(resources, 'p-');
    applyPatches(
      resources,
      [
        {
          patch: 'apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {type: NodePort}',
          source: 'p.yaml',
        },
      ],
      {},
    );
    assert.deepEqual(resources[2]!.object.metadata, { name: 'p-web' });
    assert.equal((resources[2]!.object.spec as { type: string }).type, 'NodePort');
  });

  it('deletes a whole resource with $patch: delete', () => {
    const resources = resourcesFrom(BASE);
    applyPatches(
      resources,
      [{ patch: 'apiVersion: v1\nkind: Service\nmetadata: {name: web}\n$patch: delete', source: 'p.yaml' }],
      {},
    );
    assert.deepEqual(
      resources.map((r) => r.object.kind),
      ['Deployment', 'Deployment'],
    );
  });

  it('fails when an untargeted patch matches nothing', () => {
    const resources = resourcesFrom(BASE);
    assert.throws(
      () =>
        applyPatches(
          resources,
          [{ patch: 'apiVersion: v1\nkind: Service\nmetadata: {name: nope}\nspec: {}', source: 'p.yaml' }],
          {},
        ),
      /no resource matches strategic merge patch "Service.v1.\[noGrp\]\/nope.\[noNs\]"/,
    );
  });

  it('refuses several documents with a target', () => {
    const resources = resourcesFrom(BASE);
    assert.throws(
      () =>
        applyPatches(
          resources,
          [
            {
              patch: `${SET_REPLICAS_SMP}\n---\n${SET_REPLICAS_SMP}`,
              target: { kind: 'Deployment' },
              source: 'p.yaml',
            },
          ],
          {},
        ),
      /Multiple Strategic-Merge Patches/,
    );
  });
});

describe('applyPatches loads SMP documents as resources', () => {
  it('refuses a document without kind or name', () => {
    assert.throws(
      () => replicasAfter({ patch: 'spec: {replicas: 5}', target: { kind: 'Deployment' }, source: 'inline' }),
      /unable to parse SM or JSON patch from an inline patch/,
    );
  });

  it('expands a List into its items', () => {
    const resources = resourcesFrom(BASE);
    applyPatches(
      resources,
      [
        {
          patch:
            'apiVersion: v1\nkind: List\nitems:\n- {apiVersion: apps/v1, kind: Deployment, metadata: {name: api}, spec: {replicas: 6}}',
          source: 'list.yaml',
        },
      ],
      {},
    );
    assert.equal((resources[1]!.object.spec as { replicas: number }).replicas, 6);
  });
});

describe('applyPatches JSON 6902', () => {
  it('reads operations written as YAML', () => {
    assert.deepEqual(
      replicasAfter({
        patch: '- op: replace\n  path: /spec/replicas\n  value: 4',
        target: { name: 'api' },
        source: 'ops.yaml',
      }),
      [1, 4],
    );
  });

  it('needs a target', () => {
    assert.throws(
      () => replicasAfter({ patch: SET_REPLICAS_JSON, source: 'inline' }),
      /must specify a target for JSON patch/,
    );
  });

  it('refuses text that is neither kind of patch', () => {
    assert.throws(
      () => replicasAfter({ patch: '"just a string"', source: 'inline' }),
      /unable to parse SM or JSON patch/,
    );
  });
});
