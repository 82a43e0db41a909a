// renderChart against `helm template` (bin/helm v3.22.0, release build): the same bytes for
// every case, and Helm's own message for every refusal.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { HelmTemplateError, type RenderOptions, renderChart } from '../src/index.ts';
import { helmTemplate, requireHelmBinaries, TESTDATA } from './helm-oracle.ts';

requireHelmBinaries();

const limits = { timeoutMs: 120_000, memoryBytes: 1 << 30 };
const helmCharts = join(TESTDATA, 'helm-testcharts');
const features = join(TESTDATA, 'features');

type Case = Omit<RenderOptions, 'limits'>;
const cases: Record<string, Case> = {
  'features, defaults': { chartDir: features, releaseName: 'demo', namespace: 'apps' },
  'features, values files, --set, --set-string, --api-versions': {
    chartDir: features,
    releaseName: 'demo',
    namespace: 'apps',
    values: [
      'replicas: 3\nimage:\n  tag: "1.27"\nenv:\n  - name: A\n    value: "1"\n',
      { global: { team: 'web' } },
    ],
    set: ['child.port=9090', 'list={z,y}'],
    setString: ['must=007'],
    apiVersions: ['example.com/v1', 'example.com/v1/Widget'],
  },
  'features, --kube-version, --is-upgrade, --skip-tests, child disabled': {
    chartDir: features,
    releaseName: 'up',
    namespace: 'other',
    kubeVersion: '1.30.2',
    isUpgrade: true,
    skipTests: true,
    set: ['child.enabled=false'],
  },
  'helm subchart: subcharts, globals, import-values, hooks, tests': {
    chartDir: join(helmCharts, 'subchart'),
    releaseName: 'subs',
    namespace: 'default',
  },
  'helm subchart with extra values and tags': {
    chartDir: join(helmCharts, 'subchart'),
    releaseName: 'subs',
    namespace: 'default',
    values: [readFileSync(join(helmCharts, 'subchart/extra_values.yaml'), 'utf8')],
    set: ['tags.front-end=false', 'subchartb.enabled=true'],
    includeCrds: true,
  },
  'helm chart-with-lib-dep: a packaged library chart': {
    chartDir: join(helmCharts, 'chart-with-lib-dep'),
    releaseName: 'lib',
    namespace: 'default',
  },
  'helm chart-with-schema': {
    chartDir: join(helmCharts, 'chart-with-schema'),
    releaseName: 'schema',
    namespace: 'default',
  },
  'helm object-order': {
    chartDir: join(helmCharts, 'object-order'),
    releaseName: 'order',
    namespace: 'default',
  },
  // The renderer's Helm splits documents by hand (hack/tools/helm-renderer/helm-overlay/releaseutil).
  'document separators of every kind (leading, CRLF, whitespace, repeated, glued, in scalars)': {
    chartDir: join(TESTDATA, 'document-separators'),
    releaseName: 'seps',
    namespace: 'default',
  },
  // And prints toYaml and reads fromYaml without their JSON round trips (helm-overlay/engine).
  'toYaml and fromYaml at the edges of their JSON round trips (numbers, keys, controls, errors)': {
    chartDir: join(TESTDATA, 'yaml-round-trips'),
    releaseName: 'yaml',
    namespace: 'default',
  },
  'helm chart-with-only-crds, --include-crds': {
    chartDir: join(helmCharts, 'chart-with-only-crds'),
    releaseName: 'crds',
    namespace: 'default',
    includeCrds: true,
  },
};

const refusals: Record<string, Case> = {
  'values that break the schema (a message over several lines)': {
    chartDir: join(helmCharts, 'chart-with-schema'),
    releaseName: 'schema',
    namespace: 'default',
    values: [readFileSync(join(helmCharts, 'chart-with-schema/extra-values.yaml'), 'utf8')],
  },
  'values.schema.json violation': {
    chartDir: join(helmCharts, 'chart-with-schema-negative'),
    releaseName: 'neg',
    namespace: 'default',
  },
  'schema of my own chart: replicas below its minimum': {
    chartDir: features,
    releaseName: 'demo',
    namespace: 'apps',
    set: ['replicas=0'],
  },
  'required value missing': {
    chartDir: features,
    releaseName: 'demo',
    namespace: 'apps',
    set: ['must=null'],
  },
  "the chart's kubeVersion constraint": {
    chartDir: features,
    releaseName: 'demo',
    namespace: 'apps',
    kubeVersion: 'v1.20.0',
  },
  'a bad --set expression': { chartDir: features, releaseName: 'demo', namespace: 'apps', set: ['a[=1'] },
  "sprig's env, which Helm removes": {
    chartDir: join(TESTDATA, 'hostile/env'),
    releaseName: 'r',
    namespace: 'n',
  },
  "sprig's expandenv, which Helm removes": {
    chartDir: join(TESTDATA, 'hostile/expandenv'),
    releaseName: 'r',
    namespace: 'n',
  },
  'an invalid release name': { chartDir: features, releaseName: 'Not_Valid', namespace: 'apps' },
};

describe('renderChart matches helm template v3.22.0 byte for byte', () => {
  for (const [name, c] of Object.entries(cases)) {
    it(name, { timeout: 300_000 }, async () => {
      const helm = await helmTemplate(c);
      assert.equal(helm.code, 0, `helm template failed: ${helm.stderr}`);
      const ours = await renderChart({ ...c, limits });
      assert.equal(ours, helm.stdout);
    });
  }
});

describe("renderChart refuses what helm template refuses, with Helm's message", () => {
  for (const [name, c] of Object.entries(refusals)) {
    it(name, { timeout: 300_000 }, async () => {
      const helm = await helmTemplate(c);
      assert.notEqual(helm.code, 0, 'helm template accepted it');
      await assert.rejects(renderChart({ ...c, limits }), (err: unknown) => {
        assert.ok(err instanceof HelmTemplateError, `not a HelmTemplateError: ${String(err)}`);
        assert.equal(err.kind, 'template');
        // helm adds "\n\nUse --debug flag to render out invalid YAML" after a template error.
        assert.ok(
          helm.stderr.startsWith(`Error: ${err.helmMessage}`),
          `helm said ${JSON.stringify(helm.stderr)}, the renderer ${JSON.stringify(err.helmMessage)}`,
        );
        return true;
      });
    });
  }
});

describe('.Capabilities offline is what a released helm v3.22.0 reports', () => {
  it('KubeVersion v1.37.0 (client-go v0.37 + 1, not the v1.20.0 of a plain go build), HelmVersion of the release', {
    timeout: 300_000,
  }, async () => {
    const out = await renderChart({ chartDir: features, releaseName: 'caps', namespace: 'default', limits });
    const data = (key: string): string | undefined => new RegExp(`^  ${key}: "(.*)"$`, 'm').exec(out)?.[1];
    assert.equal(data('kubeVersion'), 'v1.37.0');
    assert.equal(data('kubeMajor'), '1');
    assert.equal(data('kubeMinor'), '37');
    assert.equal(data('helmVersion'), 'v3.22.0');
    assert.equal(data('helmCommit'), '144ca65f8501953fa8b41cd1d37c7223051c85b7');
    assert.equal(data('helmTreeState'), 'clean');
    assert.equal(data('hasApps'), 'true');
    assert.equal(data('hasExtra'), 'false');
    assert.equal(data('lookup'), '{}');
  });
});

// `helm template` always renders revision 1; a HelmRelease renders the revision it is about to
// record, as `helm upgrade` does, so `.Release.Revision` in a chart counts releases.
describe('.Release of an upgrade to a later revision', () => {
  it('reports the revision given, IsUpgrade and not IsInstall', { timeout: 300_000 }, async () => {
    const out = await renderChart({
      chartDir: features,
      releaseName: 'rel',
      namespace: 'apps',
      isUpgrade: true,
      revision: 4,
      limits,
    });
    assert.match(out, /^ {2}release: "rel apps 4 install=false upgrade=true Helm"$/m);
  });
});
