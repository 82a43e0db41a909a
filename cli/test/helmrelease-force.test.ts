// `mooring reconcile helmrelease --force` through the CLI, against the source and kustomize operators
// in this process on the control plane with workloads: an upgrade that the cluster refuses runs out
// of remediation retries and stays stalled on a plain reconcile; once the cluster accepts it again,
// --force upgrades it one more time, and again when nothing changed at all.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { HELM_API_VERSION, type HelmRelease } from '@mooring/api';
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
} from '../../operators/kustomize/test/helm-release-fixture.ts';
import { mooring } from './run-cli.ts';

let stack: HelmStack;
before(async () => {
  stack = await startHelmStack('cli-hr-force');
});
after(() => stack.stop());

const ADMISSION = 'admissionregistration.k8s.io/v1';

/** A ValidatingAdmissionPolicy refusing ConfigMap `name` in the stack's namespace: the cluster, not the chart, is at fault. */
async function refuseConfigMap(name: string): Promise<{ lift(): Promise<void> }> {
  const policy = uniqueName('refuse');
  await stack.client.create({
    apiVersion: ADMISSION,
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name: policy },
    spec: {
      failurePolicy: 'Fail',
      matchConstraints: {
        namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': stack.namespace } },
        resourceRules: [
          {
            apiGroups: [''],
            apiVersions: ['v1'],
            operations: ['CREATE', 'UPDATE'],
            resources: ['configmaps'],
          },
        ],
      },
      validations: [
        { expression: `object.metadata.name != '${name}'`, message: 'refused by the test policy' },
      ],
    },
  } as KubeObject);
  await stack.client.create({
    apiVersion: ADMISSION,
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name: policy },
    spec: { policyName: policy, validationActions: ['Deny'] },
  } as KubeObject);
  const accepted = () =>
    stack.client
      .create(
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: stack.namespace } },
        { dryRun: true },
      )
      .then(
        () => true,
        () => false,
      );
  // Policies load asynchronously in the API server: wait until it refuses, and later accepts again.
  await eventually('the policy in force', async () => !(await accepted()), 60_000);
  return {
    async lift() {
      for (const kind of ['ValidatingAdmissionPolicyBinding', 'ValidatingAdmissionPolicy'])
        await stack.client.delete({ apiVersion: ADMISSION, kind, name: policy });
      await eventually('the policy lifted', accepted, 60_000);
    },
  };
}

test('reconcile helmrelease --force upgrades a release whose retries ran out, and one with nothing new', async () => {
  const ns = stack.namespace;
  const env = { KUBECONFIG: stack.kubeconfig };
  const name = uniqueName('force');
  const source = await chartRepo(stack);
  await stack.client.create({
    apiVersion: HELM_API_VERSION,
    kind: 'HelmRelease',
    metadata: { name, namespace: ns },
    spec: {
      interval: '10m',
      timeout: '2m',
      chart: chartSpec(source.name),
      values: { greeting: 'hello' },
      upgrade: { remediation: { retries: 0 } },
    },
  } as KubeObject);
  await waitForHelmRelease(stack, name, 'True', (o) => o.status?.history?.[0]?.version === 1, 180_000);

  // The upgrade adds a ConfigMap the cluster refuses: it fails once, and retries 0 means no more tries.
  const policy = await refuseConfigMap(`${name}-extra`);
  await stack.client.mergePatch(hrKey(ns, name), { spec: { values: { extra: true } } });
  const stalled = await waitForHelmRelease(
    stack,
    name,
    'False',
    (o) => condition(o, 'Stalled')?.status === 'True',
    120_000,
  );
  assert.equal(condition(stalled, 'Ready')?.reason, 'UpgradeFailed');
  assert.match(condition(stalled, 'Ready')?.message ?? '', /refused by the test policy/);
  // Helm's own records: the failed upgrade beside the release still deployed.
  const records = async () => {
    const r = await mooring(['history', 'hr', name, '-n', ns, '-o', 'json'], { env });
    assert.equal(r.code, 0, r.stderr);
    return (JSON.parse(r.stdout) as { revision: number; status: string }[]).map((h) => [
      h.revision,
      h.status,
    ]);
  };
  assert.deepEqual(await records(), [
    [1, 'deployed'],
    [2, 'failed'],
  ]);
  // The object's status says the same, newest first, though the reconcile failed.
  assert.deepEqual(
    stalled.status?.history?.map((h) => [h.version, h.status]),
    [
      [2, 'failed'],
      [1, 'deployed'],
    ],
  );
  await policy.lift();

  // A plain reconcile does not try the same chart and values again, and says how to.
  const plain = await mooring(['reconcile', 'hr', name, '-n', ns], { env });
  assert.equal(plain.code, 1, `${plain.stdout}${plain.stderr}`);
  assert.match(plain.stdout, /failed 1 times \(retries: 0\).*--force/);

  const forced = await mooring(['reconcile', 'helmrelease', name, '-n', ns, '--force', '--timeout', '3m'], {
    env,
  });
  assert.equal(forced.code, 0, `${forced.stdout}${forced.stderr}`);
  assert.match(forced.stderr, /annotating HelmRelease .* \(forced\)/);
  assert.match(forced.stdout, new RegExp(`✔ HelmRelease ${ns}/${name} reconciled.*\\.v3 deployed`));
  const hr = await stack.client.get<HelmRelease>(hrKey(ns, name));
  const forceAt = hr.metadata.annotations?.['reconcile.mooring.dev/forceAt'];
  assert.ok(forceAt);
  assert.equal(forceAt, hr.metadata.annotations?.['reconcile.mooring.dev/requestedAt']);
  assert.equal(hr.status?.lastHandledForceAt, forceAt);
  assert.equal(hr.status?.upgradeFailures, 0);
  const extra = await stack.client.getOrUndefined({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    namespace: ns,
    name: `${name}-extra`,
  });
  assert.ok(extra, 'the forced upgrade applied what the cluster refused before');

  // Nothing changed: a plain reconcile releases nothing new, --force one more upgrade.
  const again = await mooring(['reconcile', 'hr', name, '-n', ns], { env });
  assert.equal(again.code, 0, `${again.stdout}${again.stderr}`);
  assert.equal((await stack.client.get<HelmRelease>(hrKey(ns, name))).status?.history?.[0]?.version, 3);
  const once = await mooring(['reconcile', 'hr', name, '-n', ns, '--force', '--timeout', '3m'], { env });
  assert.equal(once.code, 0, `${once.stdout}${once.stderr}`);
  const after = await stack.client.get<HelmRelease>(hrKey(ns, name));
  assert.deepEqual((await records()).slice(-2), [
    [3, 'superseded'],
    [4, 'deployed'],
  ]);
  assert.notEqual(after.status?.lastHandledForceAt, forceAt);

  const refused = await mooring(['reconcile', 'ks', 'apps', '-n', ns, '--force'], { env });
  assert.equal(refused.code, 2);
  assert.match(refused.stderr, /--force works on HelmReleases only/);
});
