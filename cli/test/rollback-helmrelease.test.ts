// `mooring rollback helmrelease` through the CLI, against the kustomize operator running in this
// process on the control plane with workloads: the revision asked for becomes the deployed
// release again (a new Helm revision, as helm rollback records it), it holds while Git is
// unchanged, and new values in Git end the hold.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { HELM_API_VERSION, type HelmRelease } from '@mooring/api';
import type { KubeObject } from '@mooring/runtime';
import { eventually, uniqueName } from '@mooring/test/harness';
import {
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

test('rollback helmrelease restores a revision, holds it, and new values in Git end the hold', async () => {
  const ns = stack.namespace;
  const env = { KUBECONFIG: stack.kubeconfig };
  const name = uniqueName('rb');
  const source = await chartRepo(stack);
  await stack.client.create({
    apiVersion: HELM_API_VERSION,
    kind: 'HelmRelease',
    metadata: { name, namespace: ns },
    spec: { interval: '10m', timeout: '2m', chart: chartSpec(source.name), values: { greeting: 'hello' } },
  } as KubeObject);
  await waitForHelmRelease(stack, name, 'True', (o) => o.status?.history?.[0]?.version === 1, 180_000);
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
