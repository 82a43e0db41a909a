// Flux's upgrade options on the real control plane with workloads: preserveValues keeps the last
// release's values under the spec's (helm upgrade --reuse-values), and cleanupOnFail deletes what a
// failed upgrade added while what it changed stays (helm upgrade --cleanup-on-fail).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { HELM_API_VERSION } from '@mooring/api';
import type { KubeObject } from '@mooring/runtime';
import { eventually, uniqueName } from '@mooring/test/harness';
import {
  chartRepo,
  chartSpec,
  condition,
  type HelmStack,
  hrKey,
  requestReconcile,
  startHelmStack,
  waitForHelmRelease,
} from './helm-release-fixture.ts';

let stack: HelmStack;
before(async () => {
  stack = await startHelmStack('hr-upgrade-opts');
});
after(() => stack.stop());

const configMap = (name: string) =>
  stack.client.getOrUndefined<KubeObject & { data?: Record<string, string> }>({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    namespace: stack.namespace,
    name,
  });

async function install(name: string, spec: Record<string, unknown>): Promise<void> {
  const source = await chartRepo(stack);
  await stack.client.create({
    apiVersion: HELM_API_VERSION,
    kind: 'HelmRelease',
    metadata: { name, namespace: stack.namespace },
    spec: { interval: '10m', timeout: '2m', chart: chartSpec(source.name), ...spec },
  } as KubeObject);
  await waitForHelmRelease(stack, name, 'True', (o) => o.status?.history?.[0]?.version === 1, 180_000);
}

test('upgrade.preserveValues keeps the values of the last release that the spec no longer sets', async () => {
  const ns = stack.namespace;
  const name = uniqueName('keep');
  await install(name, { values: { greeting: 'hello', extra: true }, upgrade: { preserveValues: true } });
  // The spec drops greeting and extra and sets replicas: both are kept from revision 1.
  await stack.client.mergePatch(hrKey(ns, name), {
    spec: { values: { greeting: null, extra: null, replicas: 2 } },
  });
  await waitForHelmRelease(stack, name, 'True', (o) => o.status?.history?.[0]?.version === 2, 180_000);
  assert.equal((await configMap(`${name}-config`))?.data?.greeting, 'hello');
  assert.ok(await configMap(`${name}-extra`), 'extra: true was preserved');
  const deployment = await stack.client.get<KubeObject & { spec: { replicas: number } }>({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    namespace: ns,
    name: `${name}-app`,
  });
  assert.equal(deployment.spec.replicas, 2);

  // The merged values are the release's: another reconcile finds nothing new.
  const handled = (
    await stack.client.get<KubeObject & { status?: { lastHandledReconcileAt?: string } }>(hrKey(ns, name))
  ).status?.lastHandledReconcileAt;
  await requestReconcile(stack, HELM_API_VERSION, 'HelmRelease', name);
  const again = await eventually(
    'the next reconcile',
    async () => {
      const hr = await waitForHelmRelease(stack, name, 'True');
      return hr.status?.lastHandledReconcileAt !== handled ? hr : undefined;
    },
    120_000,
  );
  assert.equal(again.status?.history?.[0]?.version, 2);
});

test('upgrade.cleanupOnFail deletes the objects a failed upgrade added, and keeps what it changed', async () => {
  const ns = stack.namespace;
  const name = uniqueName('clean');
  await install(name, { values: { greeting: 'hello' } });
  // The upgrade adds the extra ConfigMap and never becomes healthy; retries 0, no remediation.
  await stack.client.mergePatch(hrKey(ns, name), {
    spec: {
      timeout: '15s',
      values: { greeting: 'broken', extra: true, unschedulable: true },
      upgrade: { cleanupOnFail: true, remediation: { retries: 0 } },
    },
  });
  const failed = await waitForHelmRelease(
    stack,
    name,
    'False',
    (o) => condition(o, 'Stalled')?.status === 'True',
    180_000,
  );
  assert.equal(condition(failed, 'Ready')?.reason, 'UpgradeFailed');
  await eventually('the added ConfigMap deleted', async () => !(await configMap(`${name}-extra`)), 60_000);
  assert.equal((await configMap(`${name}-config`))?.data?.greeting, 'broken', 'changed objects stay');
  assert.ok(
    !failed.status?.inventory?.entries.some((e) => e.id === `${ns}_${name}-extra__ConfigMap`),
    'and the deleted one is out of the inventory',
  );
});
