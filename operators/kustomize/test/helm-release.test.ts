// A HelmRelease's life on the real control plane with workloads: install from a chart in Git
// (through the HelmChart the operator creates), upgrade on a values change and on a new chart
// version, a hand edit reverted, a failed upgrade rolled back, and uninstall on delete; the release
// records are Helm's own Secrets, so `helm history` reads them.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { HELM_API_VERSION, SOURCE_API_VERSION } from '@mooring/api';
import { decodeReleaseSecret, type ReleaseSecret } from '@mooring/helm';
import type { KubeObject } from '@mooring/runtime';
import { eventually, uniqueName } from '@mooring/test/harness';
import {
  chartFiles,
  chartRepo,
  chartSpec,
  condition,
  type HelmStack,
  hrKey,
  requestReconcile,
  startHelmStack,
  waitForHelmRelease,
} from './helm-release-fixture.ts';

const run = promisify(execFile);
const HELM = join(import.meta.dirname, '../../../bin/helm');
const KUBECTL = join(import.meta.dirname, '../../../bin/kubectl');

let stack: HelmStack;
let ns: string;
before(async () => {
  stack = await startHelmStack('hr');
  ns = stack.namespace;
});
after(() => stack?.stop());

type ConfigMap = KubeObject & { data?: Record<string, string> };
const configMap = (name: string) =>
  stack.client.getOrUndefined<ConfigMap>({ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name });

async function records(release: string) {
  const list = await stack.client.list<ReleaseSecret & { metadata: { name: string } }>('v1', 'Secret', {
    namespace: ns,
    labelSelector: `owner=helm,name=${release}`,
  });
  return list.items.map((s) => decodeReleaseSecret(s)).sort((a, b) => a.version - b.version);
}

async function helmHistory(
  release: string,
): Promise<{ revision: number; status: string; description: string }[]> {
  const { stdout } = await run(HELM, [
    'history',
    release,
    '-n',
    ns,
    '--kubeconfig',
    stack.kubeconfig,
    '-o',
    'json',
  ]);
  return JSON.parse(stdout);
}

describe('HelmRelease lifecycle', () => {
  const name = uniqueName('probe');
  let source: { repo: { commit(files: Record<string, string>): Promise<unknown> }; name: string };

  test('installs the chart as release v1, recorded as Helm records it', async () => {
    source = await chartRepo(stack);
    const started = performance.now();
    await stack.client.create({
      apiVersion: HELM_API_VERSION,
      kind: 'HelmRelease',
      metadata: { name, namespace: ns },
      spec: { interval: '10m', timeout: '2m', chart: chartSpec(source.name), values: { greeting: 'hello' } },
    } as KubeObject);
    const hr = await waitForHelmRelease(
      stack,
      name,
      'True',
      (o) => o.status?.history?.[0]?.version === 1,
      180_000,
    );
    console.error(
      `  measured: install latency ${Math.round(performance.now() - started)} ms (create → Ready)`,
    );
    assert.equal(condition(hr, 'Ready')?.reason, 'InstallSucceeded');
    assert.equal(condition(hr, 'Released')?.status, 'True');
    assert.equal(hr.status?.helmChart, `${ns}/${ns}-${name}`);
    const cm = await configMap(`${name}-config`);
    assert.equal(cm?.data?.greeting, 'hello');
    assert.equal(cm?.data?.isUpgrade, 'false');
    assert.equal(cm?.data?.revision, '1');
    assert.equal(cm?.metadata.labels?.['helm.mooring.dev/name'], name);
    assert.equal(cm?.metadata.labels?.['app.kubernetes.io/managed-by'], 'Helm');
    assert.equal(cm?.metadata.annotations?.['meta.helm.sh/release-name'], name);
    const [v1] = await records(name);
    assert.equal(v1?.info.status, 'deployed');
    assert.deepEqual(v1?.config, { greeting: 'hello' });
    assert.ok(hr.status?.inventory?.entries.some((e) => e.id === `${ns}_${name}-app_apps_Deployment`));
    // The HelmChart the operator made names its HelmRelease.
    const chart = await stack.client.get({
      apiVersion: SOURCE_API_VERSION,
      kind: 'HelmChart',
      namespace: ns,
      name: `${ns}-${name}`,
    });
    assert.equal(chart.metadata.labels?.['helm.mooring.dev/name'], name);
    assert.deepEqual(
      (await helmHistory(name)).map((h) => [h.revision, h.status]),
      [[1, 'deployed']],
    );
    // The pre-install hook ran, before the release's objects were created.
    const hook = await stack.client.getOrUndefined({
      apiVersion: 'batch/v1',
      kind: 'Job',
      namespace: ns,
      name: `${name}-pre-install`,
    });
    assert.ok(hook, 'the pre-install hook Job was created');
    assert.ok(Date.parse(hook.metadata.creationTimestamp!) <= Date.parse(cm!.metadata.creationTimestamp!));
    assert.equal(await configMap(`${name}-post-upgrade`), undefined, 'no post-upgrade hook on install');
  });

  test('a values change upgrades to v2; v1 is superseded', async () => {
    const started = performance.now();
    await stack.client.mergePatch(hrKey(ns, name), { spec: { values: { greeting: 'bonjour' } } });
    const hr = await waitForHelmRelease(
      stack,
      name,
      'True',
      (o) => o.status?.history?.[0]?.version === 2,
      120_000,
    );
    console.error(
      `  measured: upgrade latency ${Math.round(performance.now() - started)} ms (values patch → Ready)`,
    );
    assert.equal(condition(hr, 'Ready')?.reason, 'UpgradeSucceeded');
    const cm = await configMap(`${name}-config`);
    assert.equal(cm?.data?.greeting, 'bonjour');
    assert.equal(cm?.data?.isUpgrade, 'true');
    assert.equal(cm?.data?.revision, '2');
    assert.equal((await configMap(`${name}-post-upgrade`))?.data?.revision, '2', 'the post-upgrade hook ran');
    assert.deepEqual(
      (await records(name)).map((r) => [r.version, r.info.status]),
      [
        [1, 'superseded'],
        [2, 'deployed'],
      ],
    );
  });

  test('a new chart version in Git upgrades to v3 and prunes nothing it still declares', async () => {
    await source.repo.commit(
      chartFiles({
        'Chart.yaml': 'apiVersion: v2\nname: probe\nversion: 0.2.0\nappVersion: "1.0.0"\n',
        'values.yaml': 'greeting: default\nreplicas: 1\nunschedulable: false\nextra: true\n',
      }),
    );
    await requestReconcile(stack, SOURCE_API_VERSION, 'GitRepository', source.name);
    const hr = await waitForHelmRelease(
      stack,
      name,
      'True',
      (o) => o.status?.history?.[0]?.chartVersion === '0.2.0',
      180_000,
    );
    assert.equal(hr.status?.history?.[0]?.version, 3);
    assert.equal((await configMap(`${name}-extra`))?.data?.here, 'yes');
    assert.equal((await configMap(`${name}-config`))?.data?.chartVersion, '0.2.0');
  });

  test('a hand edit is reverted on the next reconcile, with an event naming its field manager and no new release revision', async () => {
    await run(KUBECTL, [
      '--kubeconfig',
      stack.kubeconfig,
      '-n',
      ns,
      'patch',
      'configmap',
      `${name}-config`,
      '--type',
      'merge',
      '--field-manager',
      'kubectl-edit',
      '-p',
      JSON.stringify({ data: { greeting: 'edited by hand' } }),
    ]);
    await requestReconcile(stack, HELM_API_VERSION, 'HelmRelease', name);
    await eventually(
      'the edit reverted',
      async () => (await configMap(`${name}-config`))?.data?.greeting === 'bonjour',
      60_000,
    );
    const event = await eventually(
      'a DriftDetected event naming the ConfigMap',
      async () => {
        const list = await stack.client.list('v1', 'Event', { namespace: ns });
        return list.items
          .map((e) => e as unknown as { reason?: string; message?: string })
          .find((e) => e.reason === 'DriftDetected' && e.message?.includes(`ConfigMap/${ns}/${name}-config`));
      },
      30_000,
    );
    assert.match(
      event.message ?? '',
      new RegExp(`ConfigMap/${ns}/${name}-config configured \\(changed by kubectl-edit\\)`),
    );
    assert.equal((await records(name)).at(-1)?.version, 3);
  });

  test('a missing valuesFrom ConfigMap fails with its name on the status and an event; the release stays', async () => {
    await stack.client.mergePatch(hrKey(ns, name), {
      spec: { valuesFrom: [{ kind: 'ConfigMap', name: 'missing-values' }] },
    });
    const hr = await waitForHelmRelease(
      stack,
      name,
      'False',
      (o) => condition(o, 'Ready')?.reason === 'InitFailed',
      60_000,
    );
    assert.match(condition(hr, 'Ready')!.message, /valuesFrom ConfigMap 'missing-values' not found/);
    assert.equal((await configMap(`${name}-config`))?.data?.greeting, 'bonjour');
    assert.equal((await records(name)).at(-1)?.version, 3, 'no release was attempted');
    await eventually(
      'an InitFailed event',
      async () => {
        const list = await stack.client.list('v1', 'Event', { namespace: ns });
        return list.items.some((e) => (e as unknown as { reason?: string }).reason === 'InitFailed');
      },
      30_000,
    );
    await stack.client.mergePatch(hrKey(ns, name), { spec: { valuesFrom: null } });
    await waitForHelmRelease(stack, name, 'True', () => true, 60_000);
    assert.equal((await records(name)).at(-1)?.version, 3);
  });

  test('an upgrade that never becomes healthy fails and is rolled back as a new revision', async () => {
    await stack.client.mergePatch(hrKey(ns, name), {
      spec: {
        timeout: '15s',
        values: { greeting: 'broken', unschedulable: true },
        upgrade: { remediation: { retries: 0, remediateLastFailure: true } },
      },
    });
    const hr = await waitForHelmRelease(
      stack,
      name,
      'False',
      (o) => condition(o, 'Remediated')?.status === 'True',
      180_000,
    );
    assert.equal(condition(hr, 'Remediated')?.reason, 'RollbackSucceeded');
    assert.equal(condition(hr, 'Ready')?.reason, 'UpgradeFailed');
    assert.equal(condition(hr, 'Stalled')?.status, 'True');
    assert.deepEqual(
      (await records(name)).slice(-3).map((r) => [r.version, r.info.status]),
      [
        [3, 'superseded'],
        [4, 'failed'],
        [5, 'deployed'],
      ],
    );
    const history = await helmHistory(name);
    assert.equal(history.at(-1)?.description, 'Rollback to 3');
    // The rolled-back objects are v3's again.
    assert.equal((await configMap(`${name}-config`))?.data?.greeting, 'bonjour');
    const dep = await stack.client.get<
      KubeObject & { spec: { template: { spec: { nodeSelector?: unknown } } } }
    >({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      namespace: ns,
      name: `${name}-app`,
    });
    assert.equal(dep.spec.template.spec.nodeSelector, undefined);
  });

  test('deleting the HelmRelease uninstalls it: objects, records and the HelmChart go', async () => {
    await stack.client.delete(hrKey(ns, name));
    await eventually(
      'the HelmRelease gone',
      async () => !(await stack.client.getOrUndefined(hrKey(ns, name))),
      120_000,
    );
    assert.equal(await configMap(`${name}-config`), undefined);
    assert.equal(await configMap(`${name}-extra`), undefined);
    assert.deepEqual(await records(name), []);
    // The HelmChart is deleted; the source operator's finalizer lets it go.
    await eventually(
      'the HelmChart gone',
      async () =>
        !(await stack.client.getOrUndefined({
          apiVersion: SOURCE_API_VERSION,
          kind: 'HelmChart',
          namespace: ns,
          name: `${ns}-${name}`,
        })),
      60_000,
    );
  });
});
