// `mooring build <dir>` renders a kustomization's helmCharts as `kustomize build --enable-helm` with
// helm v3.22.0 does, byte for byte, and refuses a chart it would have to download.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { mooring } from './run-cli.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CASES = join(ROOT, 'test/conformance/kustomize-helm');
const work = mkdtempSync(join(tmpdir(), 'mooring-cli-helm-'));
after(() => rmSync(work, { recursive: true, force: true }));

test('build <dir> with helmCharts under an overlay prints what kustomize --enable-helm prints', async () => {
  const dir = join(work, 'overlay-case');
  cpSync(join(CASES, 'overlay-namespace-over-chart/input'), dir, { recursive: true });
  cpSync(join(CASES, '_charts/toolbox'), join(dir, 'base/charts/toolbox'), { recursive: true });
  const { stdout: expected } = await promisify(execFile)(
    join(ROOT, 'bin/kustomize'),
    ['build', '--enable-helm', '--helm-command', join(ROOT, 'bin/helm'), 'overlay'],
    { cwd: dir, env: { PATH: process.env.PATH ?? '', HOME: work } },
  );
  assert.match(expected, /name: tools-toolbox-prod/);
  const r = await mooring(['build', join(dir, 'overlay')]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, expected);
});

test('build <dir> refuses a helmCharts repo whose chart is not vendored, saying what to do, exit 1', async () => {
  const r = await mooring(['build', join(CASES, 'remote-repo-not-vendored/input')]);
  assert.equal(r.code, 1, r.stdout);
  assert.match(r.stderr, /renders without network: vendor the chart there/);
  assert.match(r.stderr, /HelmChart source/);
  assert.equal(r.stdout, '');
});
