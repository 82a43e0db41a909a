// A HelmRelease among the things it meets on a real cluster: a release the real `helm` CLI
// installed, taken over in place (helm ls and helm history agree afterwards, the running Pods are
// the same Pods), and dependsOn between HelmReleases and Kustomizations in both directions.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { HELM_API_VERSION, KUSTOMIZE_API_VERSION, SOURCE_API_VERSION } from '@mooring/api';
import { ReleaseStore } from '@mooring/helm';
import type { KubeObject, MooringObject } from '@mooring/runtime';
import { eventually, uniqueName } from '@mooring/test/harness';
import {
  CHART_DIR,
  chartFiles,
  chartSpec,
  condition,
  type HelmStack,
  startHelmStack,
  waitForHelmRelease,
} from './helm-release-fixture.ts';

const run = promisify(execFile);
const HELM = join(import.meta.dirname, '../../../bin/helm');

let stack: HelmStack;
let ns: string;
let source: string;
before(async () => {
  stack = await startHelmStack('hr-interop');
  ns = stack.namespace;
  source = uniqueName('charts');
  const repo = await stack.git.createRepo(source);
  await repo.commit({
    ...chartFiles(),
    'manifests/base/cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: base\ndata:\n  a: "1"\n',
    'manifests/app/cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  b: "2"\n',
  });
  await stack.client.create({
    apiVersion: SOURCE_API_VERSION,
    kind: 'GitRepository',
    metadata: { name: source, namespace: ns },
    spec: { url: repo.url, interval: '10m', ref: { branch: 'main' } },
  } as KubeObject);
});
after(() => stack?.stop());

const helm = async (...args: string[]) =>
  (await run(HELM, [...args, '-n', ns, '--kubeconfig', stack.kubeconfig], { maxBuffer: 1 << 24 })).stdout;

async function podNames(app: string): Promise<string[]> {
  const pods = await stack.client.list('v1', 'Pod', { namespace: ns, labelSelector: `app=${app}` });
  return pods.items.map((p) => p.metadata.name!).sort();
}

describe('HelmRelease adoption', () => {
  test('a release installed by helm is upgraded in place as its next revision; its Pods keep running', async () => {
    const name = uniqueName('adopt');
    await helm('install', name, CHART_DIR, '--set', 'greeting=from-helm');
    const app = `${name}-app`;
    const before = await eventually(
      'the Deployment Pod running',
      async () => {
        const names = await podNames(app);
        return names.length === 1 ? names : undefined;
      },
      60_000,
    );
    const deployment = await stack.client.get({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      namespace: ns,
      name: app,
    });

    await stack.client.create({
      apiVersion: HELM_API_VERSION,
      kind: 'HelmRelease',
      metadata: { name, namespace: ns },
      spec: {
        interval: '10m',
        timeout: '2m',
        chart: chartSpec(source),
        values: { greeting: 'from-mooring' },
      },
    } as KubeObject);
    const hr = await waitForHelmRelease(
      stack,
      name,
      'True',
      (o) => o.status?.history?.[0]?.version === 2,
      180_000,
    );
    assert.equal(condition(hr, 'Ready')?.reason, 'UpgradeSucceeded');

    const history = JSON.parse(await helm('history', name, '-o', 'json')) as {
      revision: number;
      status: string;
    }[];
    assert.deepEqual(
      history.map((h) => [h.revision, h.status]),
      [
        [1, 'superseded'],
        [2, 'deployed'],
      ],
    );
    const list = JSON.parse(await helm('ls', '-o', 'json')) as {
      name: string;
      revision: string;
      status: string;
    }[];
    const mine = list.find((r) => r.name === name);
    assert.equal(mine?.status, 'deployed');
    assert.equal(mine?.revision, '2');
    const values = JSON.parse(await helm('get', 'values', name, '-o', 'json')) as Record<string, unknown>;
    assert.deepEqual(values, { greeting: 'from-mooring' });

    const cm = await stack.client.get<KubeObject & { data: Record<string, string> }>({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      namespace: ns,
      name: `${name}-config`,
    });
    assert.equal(cm.data.greeting, 'from-mooring');
    const after = await stack.client.get({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      namespace: ns,
      name: app,
    });
    assert.equal(after.metadata.uid, deployment.metadata.uid, 'the Deployment was taken over, not recreated');
    assert.equal(after.metadata.labels?.['helm.mooring.dev/name'], name);
    assert.deepEqual(await podNames(app), before, 'the same Pods keep running');
  });
});

describe('HelmRelease never stuck', () => {
  test('a record left pending-install by a process that died is marked failed and the release proceeds', async () => {
    const name = uniqueName('stuck');
    const store = new ReleaseStore(stack.client, { namespace: ns });
    await store.create({
      name,
      version: 1,
      namespace: ns,
      info: {
        status: 'pending-install',
        first_deployed: '',
        last_deployed: '',
        deleted: '',
        description: 'Initial install underway',
      },
      config: {},
      manifest: '',
      hooks: [],
    });
    await stack.client.create({
      apiVersion: HELM_API_VERSION,
      kind: 'HelmRelease',
      metadata: { name, namespace: ns },
      spec: { interval: '10m', timeout: '2m', chart: chartSpec(source) },
    } as KubeObject);
    await waitForHelmRelease(stack, name, 'True', (o) => o.status?.history?.[0]?.version === 2, 180_000);
    const history = await store.history(name);
    assert.deepEqual(
      history.map((r) => [r.version, r.info.status]),
      [
        [1, 'failed'],
        [2, 'deployed'],
      ],
    );
    assert.match(history[0]!.info.description ?? '', /interrupted/);
  });

  test('a values change during a health wait ends the wait: the waiting revision is given up and the new one released', async () => {
    const name = uniqueName('newer');
    const key = { apiVersion: HELM_API_VERSION, kind: 'HelmRelease', namespace: ns, name };
    await stack.client.create({
      apiVersion: HELM_API_VERSION,
      kind: 'HelmRelease',
      metadata: { name, namespace: ns },
      spec: { interval: '10m', timeout: '10m', chart: chartSpec(source) },
    } as KubeObject);
    await waitForHelmRelease(stack, name, 'True', (o) => o.status?.history?.[0]?.version === 1, 180_000);
    // v2 never becomes healthy, and would wait ten minutes.
    await stack.client.mergePatch(key, { spec: { values: { unschedulable: true } } });
    const store = new ReleaseStore(stack.client, { namespace: ns });
    await eventually(
      'v2 pending',
      async () => (await store.latest(name))?.info.status === 'pending-upgrade',
      120_000,
    );
    await stack.client.mergePatch(key, { spec: { values: { unschedulable: false, greeting: 'newer' } } });
    await waitForHelmRelease(stack, name, 'True', (o) => o.status?.history?.[0]?.version === 3, 180_000);
    const history = await store.history(name);
    assert.equal(history[1]?.info.status, 'failed');
    assert.match(history[1]?.info.description ?? '', /^Superseded while waiting/);
    assert.equal(history[2]?.info.status, 'deployed');
  });
});

describe('HelmRelease tests (helm test)', () => {
  test('with test.enable the chart tests run after the upgrade: passing sets TestSuccess, failing fails the release', async () => {
    const name = uniqueName('tested');
    const key = { apiVersion: HELM_API_VERSION, kind: 'HelmRelease', namespace: ns, name };
    await stack.client.create({
      apiVersion: HELM_API_VERSION,
      kind: 'HelmRelease',
      metadata: { name, namespace: ns },
      spec: {
        interval: '10m',
        timeout: '2m',
        chart: chartSpec(source),
        test: { enable: true },
        values: { testHook: 'pass' },
      },
    } as KubeObject);
    const passed = await waitForHelmRelease(
      stack,
      name,
      'True',
      (o) => o.status?.history?.[0]?.version === 1,
      180_000,
    );
    assert.equal(condition(passed, 'TestSuccess')?.status, 'True');
    assert.match(condition(passed, 'TestSuccess')!.message, new RegExp(`${name}-test`));

    await stack.client.mergePatch(key, { spec: { values: { testHook: 'fail' } } });
    const failed = await waitForHelmRelease(
      stack,
      name,
      'False',
      (o) => condition(o, 'TestSuccess')?.status === 'False',
      180_000,
    );
    assert.equal(condition(failed, 'Ready')?.reason, 'UpgradeFailed');
    assert.match(condition(failed, 'Ready')!.message, new RegExp(`test Job/${name}-test failed`));
    const store = new ReleaseStore(stack.client, { namespace: ns });
    assert.equal((await store.latest(name))?.info.status, 'failed');
  });
});

describe('dependsOn between HelmReleases and Kustomizations', () => {
  test('a Kustomization waits for a HelmRelease that waits for a Kustomization; each proceeds when the other is Ready', async () => {
    const base = uniqueName('base');
    const release = uniqueName('db');
    const app = uniqueName('app');
    const kustomization = (name: string, path: string, dependsOn?: unknown[]) =>
      stack.client.create({
        apiVersion: KUSTOMIZE_API_VERSION,
        kind: 'Kustomization',
        metadata: { name, namespace: ns },
        spec: {
          interval: '10m',
          prune: true,
          sourceRef: { kind: 'GitRepository', name: source },
          path,
          ...(dependsOn ? { dependsOn } : {}),
        },
      } as KubeObject);
    await kustomization(app, './manifests/app', [{ kind: 'HelmRelease', name: release }]);
    await stack.client.create({
      apiVersion: HELM_API_VERSION,
      kind: 'HelmRelease',
      metadata: { name: release, namespace: ns },
      spec: {
        interval: '10m',
        timeout: '2m',
        chart: chartSpec(source),
        dependsOn: [{ kind: 'Kustomization', name: base }],
      },
    } as KubeObject);

    const get = (apiVersion: string, kind: string, name: string) =>
      stack.client.get<MooringObject>({ apiVersion, kind, namespace: ns, name });
    await eventually(
      'both waiting on their dependency',
      async () => {
        const hr = condition(await get(HELM_API_VERSION, 'HelmRelease', release), 'Ready');
        const ks = condition(await get(KUSTOMIZE_API_VERSION, 'Kustomization', app), 'Ready');
        return (
          hr?.reason === 'DependencyNotReady' &&
          hr.message.includes(`'${ns}/${base}' not found`) &&
          ks?.reason === 'DependencyNotReady' &&
          ks.message.includes(`HelmRelease/${ns}/${release}`)
        );
      },
      60_000,
    );
    assert.equal(
      await stack.client.getOrUndefined({ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: 'app' }),
      undefined,
      'nothing of the dependent is applied while it waits',
    );

    await kustomization(base, './manifests/base');
    await waitForHelmRelease(stack, release, 'True', () => true, 180_000);
    await eventually(
      'the dependent Kustomization applied',
      async () => {
        const ks = await get(KUSTOMIZE_API_VERSION, 'Kustomization', app);
        return condition(ks, 'Ready')?.status === 'True';
      },
      120_000,
    );
    assert.ok(
      await stack.client.getOrUndefined({ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: 'app' }),
    );
  });
});
