// spec.install.createNamespace on the real control plane: a missing target namespace refuses the
// install with the way out (status and event, no record written), and with createNamespace the
// namespace is made, labelled as the release's, and the release installed into it.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { HELM_API_VERSION } from '@mooring/api';
import { ReleaseStore } from '@mooring/helm';
import type { KubeObject } from '@mooring/runtime';
import { eventually, uniqueName } from '@mooring/test/harness';
import {
  chartRepo,
  chartSpec,
  condition,
  type HelmStack,
  hrKey,
  startHelmStack,
  waitForHelmRelease,
} from './helm-release-fixture.ts';

let stack: HelmStack;
const target = uniqueName('hr-target');
before(async () => {
  stack = await startHelmStack('hr-ns');
});
after(async () => {
  await stack?.client.delete({ apiVersion: 'v1', kind: 'Namespace', name: target }).catch(() => {});
  await stack?.stop();
});

test('a missing target namespace is refused until spec.install.createNamespace creates it', async () => {
  const ns = stack.namespace;
  const name = uniqueName('nsprobe');
  const source = await chartRepo(stack);
  await stack.client.create({
    apiVersion: HELM_API_VERSION,
    kind: 'HelmRelease',
    metadata: { name, namespace: ns },
    spec: { interval: '10m', timeout: '2m', targetNamespace: target, chart: chartSpec(source.name) },
  } as KubeObject);
  const refused = await waitForHelmRelease(
    stack,
    name,
    'False',
    (o) => /does not exist/.test(condition(o, 'Ready')?.message ?? ''),
    180_000,
  );
  assert.equal(
    condition(refused, 'Ready')?.message,
    `target namespace ${target} does not exist: create it, or set spec.install.createNamespace: true`,
  );
  assert.equal(condition(refused, 'Ready')?.reason, 'InstallFailed');
  await eventually(
    'an event naming the missing namespace',
    async () => {
      const list = await stack.client.list('v1', 'Event', { namespace: ns });
      return list.items.some((e) =>
        (e as unknown as { message?: string }).message?.includes(`target namespace ${target} does not exist`),
      );
    },
    60_000,
  );
  assert.equal(
    await stack.client.getOrUndefined({ apiVersion: 'v1', kind: 'Namespace', name: target }),
    undefined,
    'nothing created without createNamespace',
  );

  await stack.client.mergePatch(hrKey(ns, name), { spec: { install: { createNamespace: true } } });
  await waitForHelmRelease(stack, name, 'True', (o) => o.status?.history?.[0]?.version === 1, 180_000);
  const created = await stack.client.get({ apiVersion: 'v1', kind: 'Namespace', name: target });
  assert.equal(created.metadata.labels?.['helm.mooring.dev/name'], name);
  assert.equal(created.metadata.labels?.['helm.mooring.dev/namespace'], ns);
  const release = `${target}-${name}`;
  const history = await new ReleaseStore(stack.client, { namespace: target }).history(release);
  assert.deepEqual(
    history.map((r) => [r.version, r.info.status]),
    [[1, 'deployed']],
  );
  assert.ok(
    await stack.client.getOrUndefined({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      namespace: target,
      name: `${release}-config`,
    }),
    'the release objects are in the created namespace',
  );
});

test('with createNamespace, an upgrade makes a target namespace that was deleted since the install', async () => {
  const ns = stack.namespace;
  const name = uniqueName('nsup');
  const gone = uniqueName('hr-gone');
  const source = await chartRepo(stack);
  await stack.client.create({
    apiVersion: HELM_API_VERSION,
    kind: 'HelmRelease',
    metadata: { name, namespace: ns },
    spec: {
      interval: '10m',
      timeout: '2m',
      targetNamespace: gone,
      // The records outlive the target namespace, so the next release is an upgrade.
      storageNamespace: ns,
      install: { createNamespace: true },
      chart: chartSpec(source.name),
    },
  } as KubeObject);
  await waitForHelmRelease(stack, name, 'True', (o) => o.status?.history?.[0]?.version === 1, 180_000);
  const namespaceKey = { apiVersion: 'v1', kind: 'Namespace', name: gone };
  await stack.client.delete(namespaceKey);
  await eventually(
    'the target namespace deleted',
    async () => !(await stack.client.getOrUndefined(namespaceKey)),
    180_000,
  );

  await stack.client.mergePatch(hrKey(ns, name), { spec: { values: { greeting: 'back again' } } });
  await waitForHelmRelease(stack, name, 'True', (o) => o.status?.history?.[0]?.version === 2, 180_000);
  const made = await stack.client.get(namespaceKey);
  assert.equal(made.metadata.labels?.['helm.mooring.dev/name'], name);
  const config = await stack.client.get<KubeObject & { data?: Record<string, string> }>({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    namespace: gone,
    name: `${gone}-${name}-config`,
  });
  assert.deepEqual([config.data?.greeting, config.data?.isUpgrade], ['back again', 'true']);
  await stack.client.delete(namespaceKey).catch(() => {});
});
