// One warm renderer renders many different charts in a row, each byte for byte what
// `helm template` prints: nothing of one render (values, templates, files, Go state) leaks into
// the next. A refusal in between leaves the renderer warm and changes nothing after it.
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { HelmRendererPool, HelmTemplateError, type RenderOptions, renderChart } from '../src/index.ts';
import { helmTemplate, requireHelmBinaries, TESTDATA } from './helm-oracle.ts';

requireHelmBinaries();

const limits = { timeoutMs: 120_000, memoryBytes: 1 << 30 };
const publicChart = (name: string): string => join(TESTDATA, 'public-charts', name, name);

type Case = Omit<RenderOptions, 'limits'>;
const sequence: [string, Case][] = [
  [
    'features with values',
    {
      chartDir: join(TESTDATA, 'features'),
      releaseName: 'demo',
      namespace: 'apps',
      values: ['replicas: 3\n'],
      set: ['child.port=9090'],
    },
  ],
  ['cert-manager', { chartDir: publicChart('cert-manager'), releaseName: 'cm', namespace: 'cert-manager' }],
  [
    'features, defaults (after values were set)',
    {
      chartDir: join(TESTDATA, 'features'),
      releaseName: 'demo',
      namespace: 'apps',
    },
  ],
  [
    'helm subchart',
    { chartDir: join(TESTDATA, 'helm-testcharts/subchart'), releaseName: 's', namespace: 'default' },
  ],
  ['apache (bitnami common)', { chartDir: publicChart('apache'), releaseName: 'web', namespace: 'web' }],
  [
    'kserve-resources',
    { chartDir: publicChart('kserve-resources'), releaseName: 'kserve', namespace: 'kserve' },
  ],
  [
    'helm chart-with-lib-dep',
    {
      chartDir: join(TESTDATA, 'helm-testcharts/chart-with-lib-dep'),
      releaseName: 'lib',
      namespace: 'default',
      kubeVersion: '1.30.0',
    },
  ],
  [
    'cert-manager again',
    { chartDir: publicChart('cert-manager'), releaseName: 'cm', namespace: 'cert-manager' },
  ],
];

describe('one warm renderer, many charts in a row, each equal to helm template', () => {
  const pool = new HelmRendererPool({ size: 1 });
  after(() => pool.close());

  for (const [i, [name, c]] of sequence.entries()) {
    it(`${i + 1}. ${name}`, { timeout: 300_000 }, async () => {
      const helm = await helmTemplate(c);
      assert.equal(helm.code, 0, `helm template failed: ${helm.stderr}`);
      assert.equal(await renderChart({ ...c, limits, pool }), helm.stdout);
      if (i === 2) {
        // A refusal in the middle of the sequence.
        await assert.rejects(renderChart({ ...c, limits, pool, set: ['must=null'] }), HelmTemplateError);
      }
    });
  }

  it('all of them in the one renderer', () => {
    assert.equal(pool.started, 1);
    assert.equal(pool.renderers, 1);
  });
});

// A renderer keeps each chart it loaded and renders it again from memory (chart_cache.go). Helm
// changes the chart it renders (drops disabled subcharts, flags dependencies, imports values), so
// each render must start from the chart as loaded: here one chart's subcharts are switched off and
// on again, render after render, in one renderer.
describe('a chart the renderer keeps: what one render changes does not reach the next', () => {
  const pool = new HelmRendererPool({ size: 1 });
  after(() => pool.close());
  const subchart = join(TESTDATA, 'helm-testcharts/subchart');
  const prometheus = publicChart('prometheus');
  const renders: [string, Case][] = [
    ['defaults', { chartDir: subchart, releaseName: 's', namespace: 'default' }],
    [
      'subcharta off',
      { chartDir: subchart, releaseName: 's', namespace: 'default', set: ['subcharta.enabled=false'] },
    ],
    ['defaults again', { chartDir: subchart, releaseName: 's', namespace: 'default' }],
    [
      'front-end tag off',
      { chartDir: subchart, releaseName: 's', namespace: 'default', set: ['tags.front-end=false'] },
    ],
    [
      'subchartb off',
      { chartDir: subchart, releaseName: 's', namespace: 'default', set: ['subchartb.enabled=false'] },
    ],
    ['defaults once more', { chartDir: subchart, releaseName: 's', namespace: 'default' }],
    [
      'prometheus, subcharts off',
      {
        chartDir: prometheus,
        releaseName: 'prom',
        namespace: 'monitoring',
        set: [
          'alertmanager.enabled=false',
          'kube-state-metrics.enabled=false',
          'prometheus-node-exporter.enabled=false',
        ],
      },
    ],
    ['prometheus, defaults', { chartDir: prometheus, releaseName: 'prom', namespace: 'monitoring' }],
  ];
  for (const [i, [name, c]] of renders.entries()) {
    it(`${i + 1}. ${name}`, { timeout: 300_000 }, async () => {
      const helm = await helmTemplate(c);
      assert.equal(helm.code, 0, `helm template failed: ${helm.stderr}`);
      assert.equal(await renderChart({ ...c, limits, pool }), helm.stdout);
    });
  }

  it('a chart changed on disk is rendered as it is now, not as kept', { timeout: 300_000 }, async () => {
    const scratch = mkdtempSync(join(tmpdir(), 'mooring-helm-warm-reuse-'));
    try {
      const chart = join(scratch, 'features');
      cpSync(join(TESTDATA, 'features'), chart, { recursive: true });
      const c: Case = { chartDir: chart, releaseName: 'demo', namespace: 'apps' };
      assert.equal(await renderChart({ ...c, limits, pool }), (await helmTemplate(c)).stdout);
      writeFileSync(join(chart, 'templates/changed.yaml'), 'changed: {{ .Release.Name }}\n');
      const helm = await helmTemplate(c);
      assert.match(helm.stdout, /changed: demo/);
      assert.equal(await renderChart({ ...c, limits, pool }), helm.stdout);
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  });

  it('all in the one renderer', () => assert.equal(pool.started, 1));
});

describe('more renders at once than renderers: they queue', () => {
  const pool = new HelmRendererPool({ size: 2 });
  after(() => pool.close());

  it('six renders on two renderers, each equal to helm template', { timeout: 300_000 }, async () => {
    const picks = [1, 3, 4, 5, 6, 1].map((i) => sequence[i]![1]);
    const expected = await Promise.all(picks.map((c) => helmTemplate(c)));
    const ours = await Promise.all(picks.map((c) => renderChart({ ...c, limits, pool })));
    for (const [i, out] of ours.entries()) assert.equal(out, expected[i]!.stdout, `render ${i + 1}`);
    assert.ok(pool.started <= 2, `${pool.started} renderers started`);
  });
});
