// The orphan class: an object Mooring applied that no inventory lists survives every prune and
// the Kustomization's deletion. Every stage is dry-run whole before any of it is written, and what
// a stage is about to write joins the stored inventory first. End to end on the real API server.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { KUSTOMIZE_API_VERSION } from '@mooring/api';
import { eventually, testCluster, uniqueName } from '@mooring/test/harness';
import {
  condition,
  configMap,
  createKustomization,
  getKustomization,
  getObject,
  gitSource,
  requestReconcile,
  type Stack,
  startStack,
  waitForKustomization,
} from './fixture.ts';

let stack: Stack;
let ns: string;

before(async () => {
  stack = await startStack('ks-orphans');
  ns = stack.namespace;
});
after(() => stack?.stop());

const badService = (name: string) => `apiVersion: v1
kind: Service
metadata:
  name: ${name}
spec:
  ports: [{port: 70000}]
`;

const clusterRole = (name: string) => `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: ${name}
rules: []
`;

describe('orphans: nothing Mooring applies escapes the inventory', () => {
  test('one invalid object in a stage: none of the stage is applied, and the error names it', async () => {
    const name = uniqueName('dry');
    const { name: source } = await gitSource(stack, {
      'app/a.yaml': configMap(`${name}-a`, { k: 'v' }),
      'app/svc.yaml': badService(`${name}-svc`),
      'app/b.yaml': configMap(`${name}-b`, { k: 'v' }),
    });
    await createKustomization(stack, name, {
      sourceRef: { kind: 'GitRepository', name: source },
      path: 'app',
    });
    const failed = await waitForKustomization(ns, name, 'False', (k) => !!k.status?.lastAttemptedRevision);
    assert.match(condition(failed, 'Ready')!.message, new RegExp(`Service/${ns}/${name}-svc`));
    assert.equal(
      await getObject('v1', 'ConfigMap', ns, `${name}-a`),
      undefined,
      'nothing of the stage written',
    );
    assert.equal(await getObject('v1', 'ConfigMap', ns, `${name}-b`), undefined);
  });

  test('objects of a stage applied before a later stage fails are listed, then pruned by a fix and by deletion', async () => {
    const { client } = await testCluster();
    const name = uniqueName('intent');
    const role = `${name}-role`;
    const { repo, name: source } = await gitSource(stack, {
      'app/role.yaml': clusterRole(role),
      'app/svc.yaml': badService(`${name}-svc`),
    });
    await createKustomization(stack, name, {
      sourceRef: { kind: 'GitRepository', name: source },
      path: 'app',
    });
    const failed = await waitForKustomization(ns, name, 'False', (k) => !!k.status?.lastAttemptedRevision);
    assert.ok(
      await getObject('rbac.authorization.k8s.io/v1', 'ClusterRole', undefined, role),
      'stage 0 applied',
    );
    const ids = failed.status?.inventory?.entries.map((e) => e.id) ?? [];
    assert.ok(
      ids.includes(`_${role}_rbac.authorization.k8s.io_ClusterRole`),
      `the applied ClusterRole is in the inventory of the failed reconcile: ${ids.join(', ')}`,
    );

    // The fix drops the ClusterRole from Git: prune removes it, because the intent listed it.
    await repo.commit({ 'app/svc.yaml': configMap(`${name}-cm`, { fixed: 'yes' }), 'app/role.yaml': null });
    await requestReconcile('GitRepository', ns, source);
    await eventually(
      'the ClusterRole pruned once the fixed revision is applied',
      async () =>
        (await getObject('v1', 'ConfigMap', ns, `${name}-cm`)) !== undefined &&
        (await getObject('rbac.authorization.k8s.io/v1', 'ClusterRole', undefined, role)) === undefined,
      60_000,
    );
    const ready = await waitForKustomization(ns, name);
    assert.deepEqual(
      ready.status?.inventory?.entries.map((e) => e.id),
      [`${ns}_${name}-cm__ConfigMap`],
    );

    // Deleting the Kustomization removes what it applied.
    await client.delete({ apiVersion: KUSTOMIZE_API_VERSION, kind: 'Kustomization', namespace: ns, name });
    await eventually('the ConfigMap deleted with its Kustomization', async () => {
      return (await getObject('v1', 'ConfigMap', ns, `${name}-cm`)) === undefined;
    });
  });

  test('a failed stage keeps the previous inventory listed, so a later revision still prunes it', async () => {
    const name = uniqueName('keep');
    const { repo, name: source } = await gitSource(stack, {
      'app/old.yaml': configMap(`${name}-old`, { v: '1' }),
    });
    await createKustomization(stack, name, {
      sourceRef: { kind: 'GitRepository', name: source },
      path: 'app',
    });
    await waitForKustomization(ns, name);
    await repo.commit({ 'app/svc.yaml': badService(`${name}-svc`), 'app/old.yaml': null });
    await requestReconcile('GitRepository', ns, source);
    const failed = await waitForKustomization(
      ns,
      name,
      'False',
      (k) => k.status?.lastAttemptedRevision !== k.status?.lastAppliedRevision,
    );
    assert.ok(failed.status?.inventory?.entries.some((e) => e.id === `${ns}_${name}-old__ConfigMap`));
    assert.ok(await getObject('v1', 'ConfigMap', ns, `${name}-old`), 'a failed revision prunes nothing');
    const k = await getKustomization(ns, name);
    assert.notEqual(k.status?.lastAppliedRevision, k.status?.lastAttemptedRevision);
  });
});
