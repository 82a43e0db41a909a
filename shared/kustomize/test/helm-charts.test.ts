// helmCharts inflation with a recording renderer (a stand-in for Helm, unit tests only): what the
// build asks the renderer for, and what it refuses before asking. The rendered output is held to
// kustomize --enable-helm by test/conformance/kustomize-helm.test.ts.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { build, createConfinedFs, type HelmRenderRequest, toYAML } from '../src/index.ts';

const roots: string[] = [];
after(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'mooring-helm-charts-'));
  roots.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

const chart = {
  'charts/app/Chart.yaml': 'apiVersion: v2\nname: app\nversion: 1.0.0\n',
  'charts/app/values.yaml': 'size: 1\n',
};

function recorder(output: string): {
  requests: HelmRenderRequest[];
  render: (r: HelmRenderRequest) => Promise<string>;
} {
  const requests: HelmRenderRequest[] = [];
  return {
    requests,
    render: async (r) => {
      requests.push(r);
      return output;
    },
  };
}

describe('helmCharts (recording renderer)', () => {
  it('asks for the chart in chartHome with the values in -f order and the overlay namespace, and keeps helm namespaces', async () => {
    const root = tree({
      ...Object.fromEntries(Object.entries(chart).map(([k, v]) => [`base/${k}`, v])),
      'base/kustomization.yaml':
        'helmCharts:\n- name: app\n  releaseName: web\n  valuesInline: {size: 3}\n  additionalValuesFiles: [extra.yaml]\n',
      'base/extra.yaml': 'colour: blue\n',
      'overlay/kustomization.yaml': 'namespace: prod\nresources: [../base]\n',
    });
    const r = recorder(
      '---\n# Source: app/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\n',
    );
    const out = toYAML(await build(createConfinedFs(root), 'overlay', { helm: r.render }));
    assert.equal(r.requests.length, 1);
    const [req] = r.requests as [HelmRenderRequest];
    assert.equal(req.chart, 'base/charts/app');
    assert.equal(req.chartDir, join(createConfinedFs(root).root, 'base/charts/app'));
    assert.equal(req.namespace, 'prod');
    assert.deepEqual(req.values, ['{"size":3}', 'colour: blue\n']);
    assert.equal(req.kubeVersion, undefined, 'no kubeVersion set: the renderer picks the target');
    // The namespace transformer leaves what helm made alone (kustomize's helm-generated annotation).
    assert.equal(out, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\n');
  });

  it('drops hooks for skipHooks', async () => {
    const root = tree({
      ...chart,
      'kustomization.yaml': 'helmCharts:\n- name: app\n  releaseName: web\n  skipHooks: true\n',
    });
    const r = recorder(
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kept\n---\napiVersion: batch/v1\nkind: Job\nmetadata:\n  name: hook\n  annotations:\n    helm.sh/hook: pre-install\n',
    );
    const out = toYAML(await build(createConfinedFs(root), '.', { helm: r.render }));
    assert.doesNotMatch(out, /hook/);
    assert.match(out, /name: kept/);
  });

  it('refuses, before rendering, a release name that would change on every build', async () => {
    const renderer = async (): Promise<string> => assert.fail('not rendered');
    for (const [entry, why] of [
      ['- name: app\n', /releaseName is not set: .*new release name .*every build/],
      [
        '- name: app\n  nameTemplate: "{{ randAlpha 5 }}"\n',
        /nameTemplate with template actions is not supported/,
      ],
      [
        '- name: app\n  releaseName: a\n  nameTemplate: b\n',
        /cannot set --name-template and also specify a name/,
      ],
      [
        '- name: app\n  releaseName: a\n  valuesMerge: deep\n',
        /valuesMerge must be one of \[merge override replace\]/,
      ],
    ] as const) {
      const root = tree({ ...chart, 'kustomization.yaml': `helmCharts:\n${entry}` });
      await assert.rejects(build(createConfinedFs(root), '.', { helm: renderer }), why);
    }
  });

  it('names the chart by its path in the build when the renderer fails', async () => {
    const root = tree({ ...chart, 'kustomization.yaml': 'helmCharts:\n- name: app\n  releaseName: web\n' });
    await assert.rejects(
      build(createConfinedFs(root), '.', {
        helm: async (r) => {
          throw new Error(`rendering chart ${r.chartDir}: took too long`);
        },
      }),
      (err: Error) =>
        err.name === 'HelmInflationError' &&
        err.message ===
          'helmCharts: chart charts/app (release web): rendering chart charts/app: took too long',
    );
  });
});
