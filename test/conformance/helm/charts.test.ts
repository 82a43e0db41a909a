// Real public charts (issue #16, section 4): for every vendored chart and every values file,
// renderChart's output is `helm template <release> <dir> --namespace <ns> -f <values>` of the
// reference bin/helm (v3.22.0), byte for byte. Offline, as helm template is: `lookup` finds
// nothing. The charts are vendored unchanged (each with its licence and a SOURCE naming the
// repository, path and commit) under shared/helm/test/testdata/public-charts/; the values files
// beside this test are ours: none (the chart's defaults), a production overlay and a minimal one.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { renderChart } from '../../../shared/helm/src/index.ts';
import { helmTemplate, requireHelmBinaries, TESTDATA } from '../../../shared/helm/test/helm-oracle.ts';

requireHelmBinaries();

const CHARTS = join(TESTDATA, 'public-charts');
const VALUES = resolve(import.meta.dirname, 'values');
const limits = { timeoutMs: 120_000, memoryBytes: 1 << 30 };

const variants = ['defaults', 'values-production.yaml', 'values-minimal.yaml'] as const;
type Variant = (typeof variants)[number];

interface Chart {
  /** The folder under public-charts/ (its SOURCE and licence) and under values/. */
  name: string;
  /** The chart itself, inside that folder. */
  chart: string;
  release: string;
  namespace: string;
  /**
   * The chart generates key material (genCA, genSignedCert) with some values: helm's own output
   * then differs from run to run, so those base64 values are compared as what they are (the same
   * keys, each a PEM block of the same type) and every other byte exactly.
   */
  generated?: Variant[];
}

const charts: Chart[] = [
  // A monitoring agent DaemonSet.
  {
    name: 'prometheus-node-exporter',
    chart: 'prometheus-node-exporter',
    release: 'node-exporter',
    namespace: 'monitoring',
  },
  { name: 'kube-state-metrics', chart: 'kube-state-metrics', release: 'ksm', namespace: 'monitoring' },
  // Subcharts (alertmanager, kube-state-metrics, node exporter, pushgateway) and values.schema.json.
  { name: 'prometheus', chart: 'prometheus', release: 'prom', namespace: 'monitoring' },
  // CRDs (as templates, behind crds.enabled), webhooks, values.schema.json, a kubeVersion constraint.
  { name: 'cert-manager', chart: 'cert-manager', release: 'cert-manager', namespace: 'cert-manager' },
  // The admission webhook and its certgen hook Jobs; many conditionals, no values.schema.json.
  { name: 'ingress-nginx', chart: 'ingress-nginx', release: 'ingress', namespace: 'ingress-nginx' },
  // Bitnami's `common` library chart as a subchart; `tpl` (common.tplvalues.render), `.Files.Glob`.
  { name: 'apache', chart: 'apache', release: 'web', namespace: 'web' },
  // Bitnami again, for `lookup` (existingServerBlockConfigmap); its defaults generate a certificate.
  { name: 'nginx', chart: 'nginx', release: 'static', namespace: 'web', generated: ['defaults'] },
  // ML serving: KServe's controller resources, built from .Files.Get/.Files.Glob and `tpl`.
  { name: 'kserve-resources', chart: 'kserve-resources', release: 'kserve', namespace: 'kserve' },
];

// `  tls.crt: <base64 of a PEM>` in a Secret's data.
const GENERATED = /^( {2}[\w.-]+: )(LS0tLS1CRUdJTi[A-Za-z0-9+/=]*)$/gm;

/** The render with each generated PEM value replaced by its PEM type (`<generated CERTIFICATE>`). */
function maskGenerated(out: string): string {
  return out.replace(GENERATED, (_m, key: string, b64: string) => {
    const pem = Buffer.from(b64, 'base64').toString('utf8');
    return `${key}<generated ${/^-----BEGIN ([A-Z ]+)-----/.exec(pem)?.[1] ?? 'not a PEM'}>`;
  });
}

/** The first lines where two renders part, for a readable failure. */
function firstDifference(ours: string, helm: string): string {
  const a = ours.split('\n');
  const b = helm.split('\n');
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  const from = Math.max(0, i - 3);
  const show = (lines: string[]): string =>
    lines
      .slice(from, i + 5)
      .map((l, k) => `${from + k + 1}: ${l}`)
      .join('\n');
  return `first difference at line ${i + 1}\n--- renderChart\n${show(a)}\n--- helm template\n${show(b)}`;
}

describe('real public charts: renderChart equals helm template byte for byte', () => {
  for (const c of charts) {
    for (const v of variants) {
      const key = `${c.name} × ${v}`;
      const valuesFile = join(VALUES, c.name, v);
      it(key, { timeout: 300_000 }, async (t) => {
        if (v !== 'defaults') assert.ok(existsSync(valuesFile), `missing ${valuesFile}`);
        const opts = {
          chartDir: join(CHARTS, c.name, c.chart),
          releaseName: c.release,
          namespace: c.namespace,
          values: v === 'defaults' ? [] : [readFileSync(valuesFile, 'utf8')],
        };
        let start = performance.now();
        const helm = await helmTemplate(opts);
        const helmMs = performance.now() - start;
        assert.equal(helm.code, 0, `helm template failed: ${helm.stderr}`);
        assert.ok(helm.stdout.length > 0, 'helm template rendered nothing');
        start = performance.now();
        let ours = await renderChart({ ...opts, limits });
        const oursMs = performance.now() - start;
        t.diagnostic(
          `renderChart ${oursMs.toFixed(0)} ms, helm template ${helmMs.toFixed(0)} ms, ${ours.length} bytes`,
        );
        let theirs = helm.stdout;
        if (c.generated?.includes(v)) {
          ours = maskGenerated(ours);
          theirs = maskGenerated(theirs);
        }
        if (ours !== theirs) assert.fail(firstDifference(ours, theirs));
      });
    }
  }
});

describe('the vendored charts say where they came from', () => {
  it('each has a SOURCE naming repository, path and commit, a licence beside it, and its values files', () => {
    assert.deepEqual(readdirSync(CHARTS).sort(), charts.map((c) => c.name).sort());
    assert.deepEqual(readdirSync(VALUES).sort(), charts.map((c) => c.name).sort());
    for (const c of charts) {
      const dir = join(CHARTS, c.name);
      const source = readFileSync(join(dir, 'SOURCE'), 'utf8');
      assert.match(source, /^- repository: https:\/\/github\.com\/[\w.-]+\/[\w.-]+$/m, c.name);
      assert.match(source, /^- path: `[^`]+`$/m, c.name);
      assert.match(source, /^- commit: [0-9a-f]{40} /m, c.name);
      assert.ok(
        readdirSync(dir).some((f) => /^LICENSE/.test(f)),
        `${c.name}: no licence file beside SOURCE`,
      );
      assert.ok(existsSync(join(dir, c.chart, 'Chart.yaml')), `${c.name}: no chart at ${c.chart}/`);
      assert.deepEqual(
        readdirSync(join(VALUES, c.name)).sort(),
        variants.filter((v) => v !== 'defaults').sort(),
      );
    }
  });
});
