// `mooring history helmrelease` against releases the real helm (bin/helm v3.22.0) made on the
// test control plane: the same revisions, statuses, charts and descriptions `helm history` shows.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { testCluster, testNamespace } from '@mooring/test/harness';
import { mooring } from './run-cli.ts';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const HELM = join(repo, 'bin/helm');
const CHART = join(repo, 'shared/helm/test/testdata/hooks-chart');

interface HelmHistoryEntry {
  revision: number;
  status: string;
  chart: string;
  app_version: string;
  description: string;
}

test('history helmrelease lists the revisions helm history lists, from the same records', async (t) => {
  const ns = await testNamespace(t, 'cli-history');
  const { client, kubeconfig } = await testCluster();
  const home = mkdtempSync(join(tmpdir(), 'mooring-cli-history-'));
  const helm = async (...args: string[]) =>
    (
      await promisify(execFile)(HELM, [...args, '--kubeconfig', kubeconfig], {
        env: { HOME: home, PATH: '/usr/bin:/bin' },
      })
    ).stdout;
  // Hooks off: nothing here runs their Jobs, and the records are what this test is about.
  await helm('install', 'web', CHART, '-n', ns, '--no-hooks');
  await helm('upgrade', 'web', CHART, '-n', ns, '--no-hooks', '--set', 'greeting=hi');
  await client.create({
    apiVersion: 'helm.mooring.dev/v2',
    kind: 'HelmRelease',
    metadata: { name: 'web', namespace: ns },
    spec: { interval: '10m', suspend: true, chartRef: { kind: 'HelmChart', name: 'web' } },
  });

  const env = { KUBECONFIG: kubeconfig };
  const [json, table, wrongKind, missing] = await Promise.all([
    mooring(['history', 'helmrelease', 'web', '-n', ns, '-o', 'json'], { env }),
    mooring(['history', 'hr', 'web', '-n', ns], { env }),
    mooring(['history', 'kustomization', 'web', '-n', ns], { env }),
    mooring(['history', 'hr', 'absent', '-n', ns], { env }),
  ]);
  assert.equal(json.code, 0, json.stderr);
  const expected = (
    JSON.parse(await helm('history', 'web', '-n', ns, '-o', 'json')) as HelmHistoryEntry[]
  ).map((h) => ({
    revision: h.revision,
    status: h.status,
    chart: h.chart,
    appVersion: h.app_version,
    description: h.description,
  }));
  const got = (JSON.parse(json.stdout) as (HelmHistoryEntry & { appVersion: string })[]).map(
    ({ revision, status, chart, appVersion, description }) => ({
      revision,
      status,
      chart,
      appVersion,
      description,
    }),
  );
  assert.deepEqual(got, expected);
  assert.deepEqual(
    got.map((r) => `${r.revision} ${r.status}`),
    ['1 superseded', '2 deployed'],
  );
  assert.equal(table.code, 0, table.stderr);
  const lines = table.stdout.trimEnd().split('\n');
  assert.match(lines[0]!, /^REVISION\s+UPDATED\s+STATUS\s+CHART\s+APP VERSION\s+DESCRIPTION$/);
  assert.match(lines[2]!, /^2\s+\S+\s+deployed\s+hooks-chart-0\.1\.0\s+1\.0\.0\s+Upgrade complete$/);
  assert.equal(wrongKind.code, 2);
  assert.match(wrongKind.stderr, /history shows HelmReleases only/);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, new RegExp(`HelmRelease ${ns}/absent not found`));
});
