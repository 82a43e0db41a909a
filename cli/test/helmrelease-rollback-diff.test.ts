// `mooring rollback|build|diff helmrelease` through the CLI, against the kustomize operator running in this
// process on the control plane with workloads: the revision asked for becomes the deployed
// release again (a new Helm revision, as helm rollback records it), it holds while Git is
// unchanged, and new values in Git end the hold.
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { HELM_API_VERSION, type HelmRelease, SOURCE_API_VERSION } from '@mooring/api';
import type { KubeObject } from '@mooring/runtime';
import { eventually, uniqueName } from '@mooring/test/harness';
import { parseAllDocuments } from 'yaml';
import {
  CHART_DIR,
  chartRepo,
  chartSpec,
  type HelmStack,
  hrKey,
  requestReconcile,
  startHelmStack,
  waitForHelmRelease,
} from '../../operators/kustomize/test/helm-release-fixture.ts';
import { mooring } from './run-cli.ts';

let stack: HelmStack;
before(async () => {
  stack = await startHelmStack('cli-rollback');
});
after(() => stack.stop());

const greeting = async (name: string) =>
  (
    await stack.client.getOrUndefined<KubeObject & { data?: Record<string, string> }>({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      namespace: stack.namespace,
      name: `${name}-config`,
    })
  )?.data?.greeting;

/** The fixture chart from a repository of its own, released as `name` v1 with greeting hello. */
async function installRelease(name: string): Promise<void> {
  const source = await chartRepo(stack);
  await stack.client.create({
    apiVersion: HELM_API_VERSION,
    kind: 'HelmRelease',
    metadata: { name, namespace: stack.namespace },
    spec: { interval: '10m', timeout: '2m', chart: chartSpec(source.name), values: { greeting: 'hello' } },
  } as KubeObject);
  await waitForHelmRelease(stack, name, 'True', (o) => o.status?.history?.[0]?.version === 1, 180_000);
}

test('rollback helmrelease restores a revision, holds it, and new values in Git end the hold', async () => {
  const ns = stack.namespace;
  const env = { KUBECONFIG: stack.kubeconfig };
  const name = uniqueName('rb');
  await installRelease(name);
  await stack.client.mergePatch(hrKey(ns, name), { spec: { values: { greeting: 'broken-ish' } } });
  await waitForHelmRelease(stack, name, 'True', (o) => o.status?.history?.[0]?.version === 2, 120_000);
  assert.equal(await greeting(name), 'broken-ish');

  const refused = await mooring(['rollback', 'hr', name, '-n', ns, '--to', '9'], { env });
  assert.equal(refused.code, 2);
  assert.match(refused.stderr, /has no revision 9/);

  // Without --to: the revision before the deployed one, as helm rollback picks.
  const rolled = await mooring(['rollback', 'helmrelease', name, '-n', ns], { env });
  assert.equal(rolled.code, 0, `${rolled.stdout}${rolled.stderr}`);
  assert.match(
    rolled.stdout,
    new RegExp(`✔ HelmRelease ${ns}/${name} rolled back to revision 1 \\(now revision 3,`),
  );
  assert.equal(await greeting(name), 'hello');
  const history = await mooring(['history', 'hr', name, '-n', ns, '-o', 'json'], { env });
  assert.deepEqual(
    (JSON.parse(history.stdout) as { revision: number; status: string; description: string }[]).map((r) => [
      r.revision,
      r.status,
      r.description,
    ]),
    [
      [1, 'superseded', 'Superseded'],
      [2, 'superseded', 'Superseded'],
      [3, 'deployed', 'Rollback to 1'],
    ],
  );

  // Held: another reconcile with Git unchanged keeps revision 3 and does not upgrade back.
  const handled = (await stack.client.get<HelmRelease>(hrKey(ns, name))).status?.lastHandledReconcileAt;
  await requestReconcile(stack, HELM_API_VERSION, 'HelmRelease', name);
  const held = await eventually('the next reconcile', async () => {
    const hr = await stack.client.get<HelmRelease>(hrKey(ns, name));
    return hr.status?.lastHandledReconcileAt !== handled ? hr : undefined;
  });
  assert.equal(held.status?.history?.[0]?.version, 3);
  assert.equal(held.status?.rollbackHold?.version, 1);
  assert.match(
    held.status?.conditions?.find((c) => c.type === 'Ready')?.message ?? '',
    /held until the chart or values change/,
  );
  assert.equal(await greeting(name), 'hello');

  // The fix is new values: released as revision 4, and the hold is over.
  await stack.client.mergePatch(hrKey(ns, name), { spec: { values: { greeting: 'fixed' } } });
  const fixed = await waitForHelmRelease(
    stack,
    name,
    'True',
    (o) => o.status?.history?.[0]?.version === 4,
    120_000,
  );
  assert.equal((fixed as HelmRelease).status?.rollbackHold, undefined);
  assert.equal(await greeting(name), 'fixed');
});

test('build and diff helmrelease render a local chart as the operator would; the diff shows a hand edit and masks Secrets', async () => {
  const ns = stack.namespace;
  const env = { KUBECONFIG: stack.kubeconfig };
  const name = uniqueName('df');
  await installRelease(name);

  const built = await mooring(['build', 'helmrelease', name, '-n', ns, '--chart', CHART_DIR], { env });
  assert.equal(built.code, 0, built.stderr);
  const config = parseAllDocuments(built.stdout)
    .map((d) => d.toJS() as KubeObject & { data?: Record<string, string> })
    .find((o) => o?.kind === 'ConfigMap' && o.metadata.name === `${name}-config`);
  // What the next reconcile would apply: an upgrade to revision 2 with the HelmRelease's values and marks.
  assert.deepEqual(
    {
      greeting: config?.data?.greeting,
      revision: config?.data?.revision,
      isUpgrade: config?.data?.isUpgrade,
    },
    { greeting: 'hello', revision: '2', isUpgrade: 'true' },
  );
  assert.equal(config?.metadata.labels?.['helm.mooring.dev/name'], name);
  assert.equal(config?.metadata.annotations?.['meta.helm.sh/release-name'], name);

  await stack.client.mergePatch(
    { apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: `${name}-config` },
    { data: { greeting: 'tampered' } },
  );
  // A local copy of the chart with a Secret, its value from a local values file.
  const chart = mkdtempSync(join(tmpdir(), 'mooring-diff-chart-'));
  cpSync(CHART_DIR, chart, { recursive: true });
  writeFileSync(
    join(chart, 'templates/secret.yaml'),
    'apiVersion: v1\nkind: Secret\nmetadata:\n  name: {{ .Release.Name }}-token\nstringData:\n  token: {{ .Values.token | quote }}\n',
  );
  writeFileSync(join(chart, 'local.yaml'), 'token: s3cr3t-value\n');
  const diff = await mooring(
    ['diff', 'hr', name, '-n', ns, '--chart', chart, '-f', join(chart, 'local.yaml')],
    { env },
  );
  assert.equal(diff.code, 1, `${diff.stdout}${diff.stderr}`);
  assert.match(diff.stdout, new RegExp(`► ConfigMap/${ns}/${name}-config configured`));
  assert.match(diff.stdout, /^-\s+greeting: tampered$/m);
  assert.match(diff.stdout, /^\+\s+greeting: hello$/m);
  assert.match(diff.stdout, new RegExp(`► Secret/${ns}/${name}-token created`));
  assert.ok(!diff.stdout.includes('s3cr3t-value'), 'the Secret value is masked');
  assert.ok(
    !diff.stdout.includes(Buffer.from('s3cr3t-value').toString('base64')),
    'and not shown base64-encoded',
  );
  assert.match(diff.stderr, /would change in an upgrade to revision 2/);
  rmSync(chart, { recursive: true, force: true });

  // reconcile --with-source: the HelmChart the operator keeps for spec.chart first, then the
  // release, whose drift correction puts the hand edit back.
  const rec = await mooring(['reconcile', 'hr', name, '-n', ns, '--with-source', '--timeout', '3m'], { env });
  assert.equal(rec.code, 0, `${rec.stdout}${rec.stderr}`);
  assert.match(rec.stdout, new RegExp(`✔ HelmChart ${ns}/${ns}-${name} reconciled`));
  assert.match(rec.stdout, new RegExp(`✔ HelmRelease ${ns}/${name} reconciled`));
  assert.equal(await greeting(name), 'hello');
});

test('build and diff helmrelease without --chart render the chart its HelmChart holds in the cluster; an artifact not reachable from here is refused', async () => {
  const ns = stack.namespace;
  const env = { KUBECONFIG: stack.kubeconfig };
  const name = uniqueName('src');
  await installRelease(name);

  const built = await mooring(['build', 'helmrelease', name, '-n', ns], { env });
  assert.equal(built.code, 0, built.stderr);
  const config = parseAllDocuments(built.stdout)
    .map((d) => d.toJS() as KubeObject & { data?: Record<string, string> })
    .find((o) => o?.kind === 'ConfigMap' && o.metadata.name === `${name}-config`);
  assert.deepEqual(
    {
      greeting: config?.data?.greeting,
      chartVersion: config?.data?.chartVersion,
      revision: config?.data?.revision,
    },
    { greeting: 'hello', chartVersion: '0.1.0', revision: '2' },
  );

  await stack.client.mergePatch(
    { apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: `${name}-config` },
    { data: { greeting: 'tampered' } },
  );
  const diff = await mooring(['diff', 'hr', name, '-n', ns], { env });
  assert.equal(diff.code, 1, `${diff.stdout}${diff.stderr}`);
  assert.match(diff.stdout, new RegExp(`► ConfigMap/${ns}/${name}-config configured`));
  assert.match(diff.stdout, /^-\s+greeting: tampered$/m);
  assert.match(diff.stdout, /^\+\s+greeting: hello$/m);
  assert.match(diff.stderr, /would change in an upgrade to revision 2/);

  // A chart source whose artifact URL this machine cannot reach (as a Service's inside a cluster).
  const oci = uniqueName('unreachable');
  await stack.client.create({
    apiVersion: SOURCE_API_VERSION,
    kind: 'OCIRepository',
    metadata: { name: oci, namespace: ns },
    spec: {
      url: 'oci://registry.invalid/charts/probe',
      interval: '10m',
      ref: { tag: '0.1.0' },
      suspend: true,
    },
  } as KubeObject);
  await stack.client.applyStatus(
    {
      apiVersion: SOURCE_API_VERSION,
      kind: 'OCIRepository',
      metadata: { name: oci, namespace: ns },
      status: {
        artifact: {
          path: `ocirepository/${ns}/${oci}/0.tar.gz`,
          url: `http://127.0.0.1:1/ocirepository/${ns}/${oci}/0.tar.gz`,
          revision: `0.1.0@sha256:${'0'.repeat(64)}`,
          digest: `sha256:${'0'.repeat(64)}`,
          lastUpdateTime: new Date().toISOString(),
        },
      },
    } as KubeObject,
    { fieldManager: 'test', force: true },
  );
  const far = uniqueName('far');
  await stack.client.create({
    apiVersion: HELM_API_VERSION,
    kind: 'HelmRelease',
    metadata: { name: far, namespace: ns },
    spec: { interval: '10m', suspend: true, chartRef: { kind: 'OCIRepository', name: oci } },
  } as KubeObject);
  const [buildFar, diffFar] = await Promise.all([
    mooring(['build', 'hr', far, '-n', ns], { env }),
    mooring(['diff', 'hr', far, '-n', ns], { env }),
  ]);
  const refusal = new RegExp(
    `the chart artifact of OCIRepository ${ns}/${oci} is not reachable from here .*pass --chart <dir\\|tgz>`,
  );
  assert.equal(buildFar.code, 1, buildFar.stderr);
  assert.match(buildFar.stderr, refusal);
  assert.equal(buildFar.stdout, '');
  assert.equal(diffFar.code, 2, diffFar.stderr);
  assert.match(diffFar.stderr, refusal);
});
