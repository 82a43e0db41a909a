// Packaging a chart folder: the layout `helm package` writes, the same bytes for the same files,
// values files merged in order and confined to the source.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { extractTarGz } from '@mooring/artifact';
import { parse } from 'yaml';
import {
  InvalidChartError,
  mergeValuesFiles,
  packageChart,
  readChartMeta,
  vendorLocalDependencies,
} from './chart-package.ts';

const LIMITS = { maxFileBytes: 1 << 20, maxTotalBytes: 1 << 24 };

async function withTree(fn: (root: string) => Promise<void>): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'mooring-chart-unit-'));
  try {
    await mkdir(join(root, 'src', 'charts', 'app', 'templates'), { recursive: true });
    await writeFile(
      join(root, 'src', 'charts', 'app', 'Chart.yaml'),
      'apiVersion: v2\nname: app\nversion: 1.2.3\n',
    );
    await writeFile(join(root, 'src', 'charts', 'app', 'values.yaml'), 'a: {b: 1, c: 2}\nlist: [1]\n');
    await writeFile(join(root, 'src', 'charts', 'app', 'templates', 'cm.yaml'), 'kind: ConfigMap\n');
    await writeFile(join(root, 'src', 'prod.yaml'), 'a: {c: 3}\nlist: [2]\n');
    await fn(root);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

test('a chart folder is packaged as <name>/…, deterministically, with the version and values given', async () => {
  await withTree(async (root) => {
    const chartDir = join(root, 'src', 'charts', 'app');
    assert.deepEqual(await readChartMeta(chartDir, 'charts/app'), { name: 'app', version: '1.2.3' });
    const { yaml, merged } = await mergeValuesFiles(
      join(root, 'src'),
      ['charts/app/values.yaml', 'prod.yaml'],
      false,
    );
    assert.deepEqual(merged, ['charts/app/values.yaml', 'prod.yaml']);
    const pack = (n: number) =>
      packageChart({
        chartDir,
        name: 'app',
        version: '1.2.3+0123456789ab',
        values: yaml,
        work: join(root, `work${n}`),
        outFile: join(root, `app${n}.tgz`),
        limits: LIMITS,
      });
    const first = await pack(1);
    await utimes(join(chartDir, 'templates', 'cm.yaml'), new Date(0), new Date(1e12));
    const second = await pack(2);
    assert.equal(first.digest, second.digest, 'times do not change the package');
    assert.deepEqual(await readFile(join(root, 'app1.tgz')), await readFile(join(root, 'app2.tgz')));
    const out = join(root, 'out');
    await extractTarGz(join(root, 'app1.tgz'), out, LIMITS);
    assert.equal(
      (parse(await readFile(join(out, 'app', 'Chart.yaml'), 'utf8')) as { version: string }).version,
      '1.2.3+0123456789ab',
    );
    assert.deepEqual(parse(await readFile(join(out, 'app', 'values.yaml'), 'utf8')), {
      a: { b: 1, c: 3 },
      list: [2],
    });
    assert.equal(await readFile(join(out, 'app', 'templates', 'cm.yaml'), 'utf8'), 'kind: ConfigMap\n');
  });
});

test('values files must stay in the source and exist unless ignoreMissingValuesFiles; Chart.yaml must be a chart', async () => {
  await withTree(async (root) => {
    const src = join(root, 'src');
    await assert.rejects(mergeValuesFiles(src, ['../outside.yaml'], false), /leaves the source/);
    await assert.rejects(mergeValuesFiles(src, ['/etc/passwd'], false), /leaves the source/);
    await assert.rejects(mergeValuesFiles(src, ['missing.yaml'], false), /'missing.yaml' not found/);
    assert.deepEqual((await mergeValuesFiles(src, ['missing.yaml', 'prod.yaml'], true)).merged, [
      'prod.yaml',
    ]);
    await writeFile(join(src, 'list.yaml'), '- 1\n');
    await assert.rejects(mergeValuesFiles(src, ['list.yaml'], false), /is not a mapping/);
    await assert.rejects(
      readChartMeta(src, '.'),
      (err: unknown) => err instanceof InvalidChartError && /no Chart.yaml/.test(err.message),
    );
    await writeFile(join(src, 'Chart.yaml'), 'name: x\nversion: latest\n');
    await assert.rejects(readChartMeta(src, '.'), /version 'latest' is not SemVer/);
  });
});

test('file:// dependencies are vendored into charts/ from inside the source; remote ones not vendored are refused', async () => {
  await withTree(async (root) => {
    const src = join(root, 'src');
    const chart = (dir: string, text: string) =>
      mkdir(join(src, dir), { recursive: true }).then(() => writeFile(join(src, dir, 'Chart.yaml'), text));
    await chart(
      'charts/lib',
      'apiVersion: v2\nname: lib\nversion: 0.2.0\ndependencies: [{name: base, repository: "file://../base"}]\n',
    );
    await chart('charts/base', 'apiVersion: v2\nname: base\nversion: 1.0.0\n');
    const app = join(src, 'charts', 'app');
    const vendor = async (deps: string) => {
      await writeFile(
        join(app, 'Chart.yaml'),
        `apiVersion: v2\nname: app\nversion: 1.2.3\ndependencies: ${deps}\n`,
      );
      const target = await mkdtemp(join(root, 'target-'));
      return { vendored: await vendorLocalDependencies(app, target, src, 'charts/app'), target };
    };
    const { vendored, target } = await vendor('[{name: lib, version: "~0.2", repository: "file://../lib"}]');
    assert.deepEqual(vendored, ['lib']);
    assert.match(await readFile(join(target, 'charts', 'lib', 'Chart.yaml'), 'utf8'), /name: lib/);
    assert.match(
      await readFile(join(target, 'charts', 'lib', 'charts', 'base', 'Chart.yaml'), 'utf8'),
      /name: base/,
    );
    await assert.rejects(
      vendor('[{name: lib, version: ">=1", repository: "file://../lib"}]'),
      /version 0.2.0, not within '>=1'/,
    );
    await assert.rejects(vendor('[{name: lib, repository: "file://../../../.."}]'), /leaves the source/);
    await assert.rejects(vendor('[{name: other, repository: "file://../lib"}]'), /is chart 'lib'/);
    await assert.rejects(
      vendor('[{name: redis, version: 1.x, repository: "https://charts.example"}]'),
      /dependency 'redis' from 'https:\/\/charts.example' is not in charts\/; only file:\/\/ dependencies/,
    );
    // Vendored already (charts/redis-1.0.0.tgz): kept as it is.
    await mkdir(join(app, 'charts'), { recursive: true });
    await writeFile(join(app, 'charts', 'redis-1.0.0.tgz'), 'x');
    const target2 = await mkdtemp(join(root, 'target-'));
    await mkdir(join(target2, 'charts'));
    await writeFile(join(target2, 'charts', 'redis-1.0.0.tgz'), 'x');
    await writeFile(
      join(app, 'Chart.yaml'),
      'apiVersion: v2\nname: app\nversion: 1.2.3\ndependencies: [{name: redis, repository: "https://charts.example"}]\n',
    );
    assert.deepEqual(await vendorLocalDependencies(app, target2, src, 'charts/app'), []);
  });
});
