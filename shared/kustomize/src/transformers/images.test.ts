import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type ImageOverride, setImages, splitImage } from './images.ts';
import { resourcesFrom } from './test-resources.ts';

describe('splitImage', () => {
  const cases: [string, { name: string; tag: string; digest: string }][] = [
    ['nginx', { name: 'nginx', tag: '', digest: '' }],
    ['nginx:1.2', { name: 'nginx', tag: '1.2', digest: '' }],
    ['nginx@sha256:abc', { name: 'nginx', tag: '', digest: 'sha256:abc' }],
    ['nginx:1.2@sha256:abc', { name: 'nginx', tag: '1.2', digest: 'sha256:abc' }],
    ['reg:5000/team/app:v1', { name: 'reg:5000/team/app', tag: 'v1', digest: '' }],
    ['reg:5000/team/app', { name: 'reg:5000/team/app', tag: '', digest: '' }],
  ];
  for (const [image, want] of cases) it(image, () => assert.deepEqual(splitImage(image), want));
});

describe('setImages', () => {
  const cases: { name: string; image: string; override: ImageOverride; want: string }[] = [
    { name: 'new tag', image: 'nginx:1.0', override: { name: 'nginx', newTag: '1.1' }, want: 'nginx:1.1' },
    {
      name: 'new name keeps tag',
      image: 'nginx:1.0',
      override: { name: 'nginx', newName: 'reg/nginx' },
      want: 'reg/nginx:1.0',
    },
    {
      name: 'digest replaces the tag',
      image: 'nginx:1.0',
      override: { name: 'nginx', digest: 'sha256:ff' },
      want: 'nginx@sha256:ff',
    },
    {
      name: 'tag and digest together',
      image: 'nginx@sha256:00',
      override: { name: 'nginx', newTag: '2', digest: 'sha256:ff' },
      want: 'nginx:2@sha256:ff',
    },
    {
      name: 'other image untouched',
      image: 'nginx-extra:1',
      override: { name: 'nginx', newTag: '2' },
      want: 'nginx-extra:1',
    },
    {
      name: 'name with registry port',
      image: 'reg:5000/app:1',
      override: { name: 'reg:5000/app', newTag: '2' },
      want: 'reg:5000/app:2',
    },
    {
      name: 'name is a regular expression',
      image: 'team/app:1',
      override: { name: 'team/.*', newTag: '9' },
      want: 'team/app:9',
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const resources = resourcesFrom(
        `apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {template: {spec: {containers: [{name: a, image: "${c.image}"}], initContainers: [{name: b, image: "${c.image}"}]}}}`,
      );
      setImages(resources, [c.override]);
      const spec = (resources[0]!.object.spec as { template: { spec: Record<string, { image: string }[]> } })
        .template.spec;
      assert.equal(spec.containers![0]!.image, c.want);
      assert.equal(spec.initContainers![0]!.image, c.want);
    });
  }

  it('reaches containers anywhere in a custom resource but never in a CRD', () => {
    const resources = resourcesFrom(
      'apiVersion: example.com/v1\nkind: Runner\nmetadata: {name: r}\nspec: {deep: {containers: [{image: nginx}]}}\n---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: r.example.com}\nspec: {containers: [{image: nginx}]}',
    );
    setImages(resources, [{ name: 'nginx', newTag: '2' }]);
    assert.deepEqual(resources[0]!.object.spec, { deep: { containers: [{ image: 'nginx:2' }] } });
    assert.deepEqual(resources[1]!.object.spec, { containers: [{ image: 'nginx' }] });
  });

  it('updates image volumes through the field specs', () => {
    const resources = resourcesFrom(
      'apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {volumes: [{name: v, image: {reference: "data:1"}}]}',
    );
    setImages(resources, [{ name: 'data', newName: 'reg/data' }]);
    assert.deepEqual(resources[0]!.object.spec, {
      volumes: [{ name: 'v', image: { reference: 'reg/data:1' } }],
    });
  });
});
