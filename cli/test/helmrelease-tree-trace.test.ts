// `mooring tree` and `mooring trace` through HelmReleases, on the control plane with workloads and
// the source and kustomize operators in this process: a Kustomization applies a HelmRelease from
// Git, the HelmRelease installs the fixture chart through the HelmChart the operator keeps for it.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { KUSTOMIZE_API_VERSION, SOURCE_API_VERSION } from '@mooring/api';
import type { KubeObject } from '@mooring/runtime';
import { eventually, uniqueName } from '@mooring/test/harness';
import {
  chartFiles,
  type HelmStack,
  startHelmStack,
  waitForHelmRelease,
} from '../../operators/kustomize/test/helm-release-fixture.ts';
import { mooring } from './run-cli.ts';

let stack: HelmStack;
before(async () => {
  stack = await startHelmStack('cli-hr-trace');
});
after(() => stack.stop());

/** The value printed after `label:` on its own line of `text`. */
function field(text: string, label: string, nth = 0): string | undefined {
  return [...text.matchAll(new RegExp(`^${label}: +(.*)$`, 'gm'))].map((m) => m[1])[nth];
}

test('tree and trace follow an object up through its HelmRelease, HelmChart and GitRepository to the Kustomization that applied the release', async () => {
  const ns = stack.namespace;
  const env = { KUBECONFIG: stack.kubeconfig };
  const repoName = uniqueName('platform');
  const hr = uniqueName('agent');
  const repo = await stack.git.createRepo(repoName);
  const commit = await repo.commit({
    ...chartFiles(),
    'deploy/kustomization.yaml': 'resources:\n  - release.yaml\n',
    'deploy/release.yaml': `apiVersion: helm.mooring.dev/v2
kind: HelmRelease
metadata:
  name: ${hr}
  namespace: ${ns}
spec:
  interval: 10m
  timeout: 2m
  chart:
    spec:
      chart: ./charts/probe
      sourceRef: {kind: GitRepository, name: ${repoName}}
  values:
    greeting: hello
`,
  });
  await stack.client.create({
    apiVersion: SOURCE_API_VERSION,
    kind: 'GitRepository',
    metadata: { name: repoName, namespace: ns },
    spec: { url: repo.url, interval: '10m', ref: { branch: 'main' } },
  } as KubeObject);
  await stack.client.create({
    apiVersion: KUSTOMIZE_API_VERSION,
    kind: 'Kustomization',
    metadata: { name: 'apps', namespace: ns },
    spec: {
      interval: '10m',
      path: './deploy',
      prune: true,
      sourceRef: { kind: 'GitRepository', name: repoName },
    },
  } as KubeObject);
  await waitForHelmRelease(stack, hr, 'True', (o) => o.status?.history?.[0]?.version === 1, 180_000);
  await eventually(
    'the Kustomization lists the HelmRelease',
    async () => {
      const ks = await stack.client.get<
        KubeObject & { status?: { inventory?: { entries: { id: string }[] } } }
      >({ apiVersion: KUSTOMIZE_API_VERSION, kind: 'Kustomization', namespace: ns, name: 'apps' });
      return ks.status?.inventory?.entries.some((e) => e.id.endsWith('_HelmRelease'));
    },
    120_000,
  );

  // The release's objects, then the same under the Kustomization that applied the release.
  const released = await mooring(['tree', 'helmrelease', hr, '-n', ns], { env });
  assert.equal(released.code, 0, released.stderr);
  const lines = released.stdout.trimEnd().split('\n');
  assert.equal(lines[0], `HelmRelease/${ns}/${hr} (release ${ns}/${hr} v1 deployed, chart probe@0.1.0)`);
  assert.deepEqual(
    lines
      .slice(1)
      .map((l) => l.replace(/^[├└]── /, ''))
      .sort(),
    [`ConfigMap/${ns}/${hr}-config`, `Deployment/${ns}/${hr}-app`],
  );
  const applied = await mooring(['tree', 'ks', 'apps', '-n', ns], { env });
  assert.equal(applied.code, 0, applied.stderr);
  assert.match(applied.stdout, new RegExp(`^Kustomization/${ns}/apps\n└── HelmRelease/${ns}/${hr}\n`));
  assert.match(applied.stdout, new RegExp(`^ {4}[├└]── ConfigMap/${ns}/${hr}-config$`, 'm'));
  assert.match(applied.stdout, new RegExp(`^ {4}[├└]── Deployment/${ns}/${hr}-app$`, 'm'));
  const missing = await mooring(['tree', 'hr', 'nope', '-n', ns], { env });
  assert.equal(missing.code, 1);
  assert.match(
    missing.stderr,
    new RegExp(`HelmRelease ${ns}/nope not found: list them with 'mooring get helmreleases`),
  );

  // An object of the chart: its HelmRelease, the HelmChart, the Git source once, then the Kustomization.
  const traced = await mooring(['trace', 'configmap', `${hr}-config`, '-n', ns], { env });
  assert.equal(traced.code, 0, `${traced.stdout}${traced.stderr}`);
  const blocks = traced.stdout.trimEnd().split('\n---\n');
  assert.deepEqual(
    blocks.map((b) => b.split('\n')[0]),
    [
      `Object:         ConfigMap/${hr}-config`,
      `HelmRelease:    ${hr}`,
      `HelmChart:      ${ns}-${hr}`,
      `GitRepository:  ${repoName}`,
      'Kustomization:  apps',
    ],
    traced.stdout,
  );
  const [object = '', release = '', chart = '', git = '', ks = ''] = blocks;
  assert.equal(field(object, 'Managed by'), `HelmRelease ${ns}/${hr}`);
  assert.equal(field(release, 'Chart'), 'probe@0.1.0');
  assert.equal(field(release, 'Release'), `${ns}/${hr} v1 deployed`);
  assert.match(field(release, 'Ready') ?? '', /^True - Helm release .* deployed with chart probe@0\.1\.0/);
  assert.equal(field(release, 'Source'), `HelmChart ${ns}/${ns}-${hr}`);
  assert.equal(field(release, 'Managed by'), `Kustomization ${ns}/apps`);
  assert.equal(field(chart, 'Chart'), './charts/probe');
  assert.equal(field(chart, 'Revision'), '0.1.0');
  assert.match(field(chart, 'Ready') ?? '', /^True/);
  assert.equal(field(chart, 'Source'), `GitRepository ${ns}/${repoName}`);
  assert.equal(field(git, 'Revision'), `main@sha1:${commit}`);
  assert.equal(field(ks, 'Revision'), `main@sha1:${commit}`);
  assert.equal(field(ks, 'Source'), `GitRepository ${ns}/${repoName}`);

  // A hook is the release's though no inventory lists it.
  const hook = await mooring(['trace', 'job', `${hr}-pre-install`, '-n', ns], { env });
  assert.equal(hook.code, 0, `${hook.stdout}${hook.stderr}`);
  assert.equal(field(hook.stdout, 'Managed by'), `HelmRelease ${ns}/${hr}, as its pre-install hook`);

  // The release's labels copied onto another object by hand: reported, and the trace fails.
  await stack.client.create({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: 'copied',
      namespace: ns,
      labels: { 'helm.mooring.dev/name': hr, 'helm.mooring.dev/namespace': ns },
    },
  });
  const copied = await mooring(['trace', 'cm', 'copied', '-n', ns], { env });
  assert.equal(copied.code, 1, `${copied.stdout}${copied.stderr}`);
  assert.equal(
    field(copied.stdout, 'Managed by'),
    `HelmRelease ${ns}/${hr} by its labels only: not in its inventory`,
  );
  assert.match(
    copied.stderr,
    new RegExp(
      `^✗ ConfigMap ${ns}/copied carries the labels of HelmRelease ${ns}/${hr} but is not in its inventory.*remove its helm\\.mooring\\.dev labels`,
      'm',
    ),
  );
});
