// chartRecordOf builds the chart part of a release record as Helm's loader does: for both fixture
// charts it is byte for byte the chart `helm install` recorded (testdata/release-records), YAML 1.1
// scalars, .helmignore, a byte order mark, values.schema.json and a subchart folder included.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ChartRecordError, chartRecordOf, decodeReleaseSecret, releaseJson } from '../src/index.ts';
import { HelmIgnore } from '../src/release/helm-ignore.ts';

const FIXTURES = join(import.meta.dirname, 'testdata');
const recorded = (file: string) =>
  decodeReleaseSecret(JSON.parse(readFileSync(join(FIXTURES, 'release-records', file), 'utf8')));

describe('chartRecordOf', () => {
  for (const [chart, record] of [
    ['hooks-chart', 'demo-v1.secret.json'],
    ['yaml11-chart', 'y11-v1.secret.json'],
  ] as const) {
    it(`${chart}: the chart helm install recorded, byte for byte`, () => {
      const release = recorded(record);
      assert.equal(
        releaseJson({ ...release, chart: chartRecordOf(join(FIXTURES, chart)) }),
        releaseJson(release),
      );
    });
  }

  it('reads YAML as Helm does, and leaves out what Helm leaves out', () => {
    const c = chartRecordOf(join(FIXTURES, 'yaml11-chart'));
    assert.equal(c.metadata?.appVersion, '1.1');
    assert.equal(c.metadata?.description, '10');
    assert.deepEqual(c.metadata?.keywords, ['1.5', 'true', 'plain']);
    assert.deepEqual(c.metadata?.annotations, { count: '1', flag: 'true' });
    assert.equal(c.values?.true, true);
    assert.equal(c.values?.false, 10);
    assert.equal(c.values?.t, '2001-12-14');
    assert.deepEqual(c.values?.merged, { a: 1, b: 'three' });
    const files = (c.files ?? []).map((f) => f.name);
    // The subchart is not in the record, its provenance file is; templates/ dotfiles are ignored.
    assert.deepEqual(files, ['README.md', 'charts/sub-0.1.0.tgz.prov']);
    assert.deepEqual(
      (c.templates ?? []).map((f) => f.name),
      ['templates/out.yaml'],
    );
    assert.equal(
      Buffer.from(c.files?.[0]?.data ?? '', 'base64').toString(),
      'A README with a byte order mark.\n',
    );
    assert.equal(Buffer.from(c.schema ?? '', 'base64').toString(), '{"type": "object"}\n');
  });

  describe('a chart Helm could not load', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mooring-chart-record-'));
    after(() => rmSync(dir, { recursive: true, force: true }));

    it('without Chart.yaml', () => {
      mkdirSync(join(dir, 'none'));
      assert.throws(
        () => chartRecordOf(join(dir, 'none')),
        (err: unknown) => {
          assert.ok(err instanceof ChartRecordError);
          assert.match(err.message, /Chart\.yaml file is missing/);
          return true;
        },
      );
    });

    it('with a .helmignore rule Helm refuses', () => {
      mkdirSync(join(dir, 'stars'));
      writeFileSync(join(dir, 'stars/Chart.yaml'), 'apiVersion: v2\nname: s\nversion: 1.0.0\n');
      writeFileSync(join(dir, 'stars/.helmignore'), 'docs/**\n');
      assert.throws(() => chartRecordOf(join(dir, 'stars')), /double-star \(\*\*\) syntax is not supported/);
    });

    it('with values.yaml that is not a map', () => {
      mkdirSync(join(dir, 'list'));
      writeFileSync(join(dir, 'list/Chart.yaml'), 'apiVersion: v2\nname: l\nversion: 1.0.0\n');
      writeFileSync(join(dir, 'list/values.yaml'), '- a\n');
      assert.throws(() => chartRecordOf(join(dir, 'list')), /cannot load values\.yaml/);
    });
  });
});

describe('.helmignore as Helm reads it', () => {
  const cases: [rules: string, path: string, isDir: boolean, ignored: boolean][] = [
    ['*.orig', 'values.yaml.orig', false, true],
    ['*.orig', 'templates/a.orig', false, true],
    ['*.orig', 'values.yaml', false, false],
    ['/docs', 'docs', true, true],
    ['/docs', 'sub/docs', true, false],
    ['templates/*.txt', 'templates/x.txt', false, true],
    ['templates/*.txt', 'templates/y/x.txt', false, false],
    ['secrets/', 'secrets', true, true],
    ['secrets/', 'secrets', false, false],
    ['file[0-9].yaml', 'file3.yaml', false, true],
    ['file[!0-9].yaml', 'filea.yaml', false, false],
    ['file[^0-9].yaml', 'filea.yaml', false, true],
    ['\\*.yaml', '*.yaml', false, true],
    ['# a comment', '# a comment', false, false],
    ['', 'templates/.hidden.yaml', false, true],
    ['', 'templates/.', false, false],
    ['', 'templates/.git', true, true],
    ['', '.helmignore', false, false],
  ];
  for (const [rules, path, isDir, ignored] of cases) {
    it(`${JSON.stringify(rules)} ${ignored ? 'ignores' : 'keeps'} ${path}${isDir ? '/' : ''}`, () => {
      assert.equal(new HelmIgnore(rules).ignores(path, isDir), ignored);
    });
  }
});
