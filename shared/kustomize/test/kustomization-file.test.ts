import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { createConfinedFs } from '../src/confined-fs.ts';
import { findKustomizationFile, parseKustomization } from '../src/kustomization-file.ts';

describe('parseKustomization', () => {
  it('refuses an unknown field and names it, as kustomize does', () => {
    assert.throws(
      () => parseKustomization('resources: []\nnamePrefx: a-\n', 'kustomization.yaml'),
      /unknown field "namePrefx"/,
    );
    assert.throws(
      () => parseKustomization('configMapGenerator:\n- name: a\n  literal: [a=b]\n', 'kustomization.yaml'),
      /unknown field "literal"/,
    );
  });

  it('folds the legacy fields in: bases into resources, imageTags into images, env into envs', () => {
    const k = parseKustomization(
      'resources: [a.yaml]\nbases: [../base]\nimageTags:\n- name: nginx\n  newTag: "2"\nconfigMapGenerator:\n- name: c\n  env: x.env\n',
      'kustomization.yaml',
    );
    assert.deepEqual(k.resources, ['a.yaml', '../base']);
    assert.deepEqual(k.images, [{ name: 'nginx', newTag: '2' }]);
    assert.deepEqual(k.configMapGenerator, [{ name: 'c', envs: ['x.env'] }]);
  });

  it('accepts a v1alpha1 Component and refuses mismatched apiVersions', () => {
    const c = parseKustomization(
      'apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nnamespace: x\n',
      'k',
    );
    assert.equal(c.kind, 'Component');
    assert.throws(
      () =>
        parseKustomization(
          'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Component\nnamespace: x\n',
          'k',
        ),
      /apiVersion for Component should be kustomize.config.k8s.io\/v1alpha1/,
    );
    assert.throws(
      () => parseKustomization('kind: Something\nnamespace: x\n', 'k'),
      /kind should be Kustomization or Component/,
    );
  });

  it('reads the file as YAML 1.1 like kustomize: an unquoted y is a boolean, a lone dot a path', () => {
    assert.throws(
      () => parseKustomization('commonLabels:\n  enabled: y\n', 'k'),
      /commonLabels.enabled must be a string/,
    );
    assert.deepEqual(parseKustomization('resources: [.]\n', 'k').resources, ['.']);
  });

  it('reads helmCharts as kustomize does (the legacy list folded in), and refuses an empty file and a non-string where a string belongs', () => {
    const k = parseKustomization(
      'helmCharts:\n- name: X\n  ReleaseName: x\nhelmChartInflationGenerator:\n- chartName: legacy\n  chartHome: vendor\n',
      'k',
    );
    assert.deepEqual(k.helmCharts, [{ name: 'X', releaseName: 'x' }, { name: 'legacy' }]);
    assert.deepEqual(k.helmGlobals, { chartHome: 'vendor' });
    assert.throws(
      () => parseKustomization('helmCharts:\n- name: X\n  chart: y\n', 'k'),
      /unknown field "chart"/,
    );
    assert.throws(
      () => parseKustomization('helmCharts:\n- name: X\n  skipHooks: yes please\n', 'k'),
      /skipHooks must be a boolean/,
    );
    assert.throws(() => parseKustomization('# nothing\n', 'k'), /kustomization.yaml is empty/);
    assert.throws(() => parseKustomization('namePrefix: [a]\n', 'k'), /namePrefix must be a string/);
  });
});

describe('parseKustomization vars', () => {
  it('defaults fieldPath, splits apiVersion and matches keys case-insensitively as Go does', () => {
    const k = parseKustomization(
      'vars:\n- name: A\n  objref: {apiVersion: apps/v1, kind: Deployment, name: d}\n- name: B\n  objref: {kind: Service, version: v1, name: s}\n  fieldref: {fieldpath: spec.clusterIP}\n',
      'k',
    );
    assert.deepEqual(k.vars, [
      {
        name: 'A',
        objref: { group: 'apps', version: 'v1', kind: 'Deployment', name: 'd', namespace: '' },
        fieldPath: 'metadata.name',
      },
      {
        name: 'B',
        objref: { group: '', version: 'v1', kind: 'Service', name: 's', namespace: '' },
        fieldPath: 'spec.clusterIP',
      },
    ]);
    assert.throws(
      () => parseKustomization('vars:\n- name: A\n  objRefs: {}\n', 'k'),
      /unknown field "objRefs"/,
    );
  });
});

describe('findKustomizationFile', () => {
  const root = mkdtempSync(join(tmpdir(), 'mooring-kfile-'));
  after(() => rmSync(root, { recursive: true, force: true }));

  it('finds each recognised name and refuses more than one', () => {
    writeFileSync(join(root, 'Kustomization'), 'namespace: a\n');
    assert.equal(findKustomizationFile(createConfinedFs(root), ''), 'Kustomization');
    writeFileSync(join(root, 'kustomization.yml'), 'namespace: a\n');
    assert.throws(
      () => findKustomizationFile(createConfinedFs(root), ''),
      /Found multiple kustomization files/,
    );
  });
});
