// A chart whose crds/ folder is a link to CRDs generated beside it in its repository, as kwok's
// chart is laid out: for the tests of where a chart's links may lead.
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Writes the tree under `tree` (charts/app, config/crd) and returns the chart's folder. */
export function writeChartLinkingBeside(tree: string): string {
  const chart = join(tree, 'charts', 'app');
  mkdirSync(join(chart, 'templates'), { recursive: true });
  mkdirSync(join(tree, 'config', 'crd'), { recursive: true });
  writeFileSync(join(chart, 'Chart.yaml'), 'apiVersion: v2\nname: app\nversion: 0.1.0\n');
  writeFileSync(
    join(chart, 'templates', 'cm.yaml'),
    'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app}\n',
  );
  writeFileSync(
    join(tree, 'config', 'crd', 'widgets.yaml'),
    'apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: widgets.example.com}\n',
  );
  symlinkSync('../../config/crd', join(chart, 'crds'));
  return chart;
}
