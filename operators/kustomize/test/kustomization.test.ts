// The Kustomization reconciler end to end: a real Git server, the source and kustomize operators
// in this process, the real API server. Each test owns its repository and Kustomization names.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { eventually, kubectl, testCluster, uniqueName } from '@mooring/test/harness';
import {
  condition,
  configMap,
  createKustomization,
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
  stack = await startStack('ks');
  ns = stack.namespace;
});
after(() => stack?.stop());

const deployment = (name: string, image = 'nginx:1.27') => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
spec:
  replicas: 0
  selector:
    matchLabels: {app: ${name}}
  template:
    metadata:
      labels: {app: ${name}}
    spec:
      containers:
        - name: app
          image: ${image}
`;

describe('Kustomization', { concurrency: 4 }, () => {
  test('applies a plain directory, records the inventory, and prunes what left Git', async () => {
    const { repo, name: source } = await gitSource(stack, {
      'deploy/a.yaml': configMap('alpha', { k: 'v' }),
      'deploy/b.yaml': `${configMap('beta', { k: 'v' })}---\n${deployment('web')}`,
      'other/ignored.yaml': configMap('not-in-path', {}),
    });
    const name = uniqueName('plain');
    await createKustomization(stack, name, {
      sourceRef: { kind: 'GitRepository', name: source },
      path: './deploy',
    });
    const ready = await waitForKustomization(ns, name);
    assert.match(condition(ready, 'Ready')!.message, /^Applied revision: main@sha1:[0-9a-f]{40}$/);
    assert.deepEqual(
      ready.status!.inventory!.entries.map((e) => e.id),
      [`${ns}_alpha__ConfigMap`, `${ns}_beta__ConfigMap`, `${ns}_web_apps_Deployment`],
    );
    const alpha = await getObject('v1', 'ConfigMap', ns, 'alpha');
    assert.equal(alpha?.metadata.labels?.['kustomize.mooring.dev/name'], name);
    assert.equal(await getObject('v1', 'ConfigMap', ns, 'not-in-path'), undefined);

    const commit = await repo.commit({ 'deploy/a.yaml': null });
    await requestReconcile('GitRepository', ns, source);
    await waitForKustomization(
      ns,
      name,
      'True',
      (k) => k.status?.lastAppliedRevision === `main@sha1:${commit}`,
    );
    await eventually(
      'alpha pruned',
      async () => (await getObject('v1', 'ConfigMap', ns, 'alpha')) === undefined,
    );
    assert.ok(await getObject('v1', 'ConfigMap', ns, 'beta'));
  });

  test('prune: false leaves removed objects in place', async () => {
    const { repo, name: source } = await gitSource(stack, { 'k/a.yaml': configMap('keep-me', {}) });
    const name = uniqueName('noprune');
    await createKustomization(stack, name, {
      sourceRef: { kind: 'GitRepository', name: source },
      path: 'k',
      prune: false,
    });
    await waitForKustomization(ns, name);
    const commit = await repo.commit({ 'k/a.yaml': null, 'k/b.yaml': configMap('new-one', {}) });
    await requestReconcile('GitRepository', ns, source);
    await waitForKustomization(
      ns,
      name,
      'True',
      (k) => k.status?.lastAppliedRevision === `main@sha1:${commit}`,
    );
    assert.ok(await getObject('v1', 'ConfigMap', ns, 'keep-me'));
  });

  test('kubectl edits to fields Mooring owns are reverted, and fields kubectl added are removed', async () => {
    const { name: source } = await gitSource(stack, { 'd/cm.yaml': configMap('drifty', { mode: 'git' }) });
    const name = uniqueName('drift');
    await createKustomization(stack, name, { sourceRef: { kind: 'GitRepository', name: source }, path: 'd' });
    await waitForKustomization(ns, name);
    await kubectl(
      '-n',
      ns,
      'patch',
      'configmap',
      'drifty',
      '--type=merge',
      '-p',
      '{"data":{"mode":"edited","extra":"x"}}',
    );
    await requestReconcile('Kustomization', ns, name);
    await eventually('drift reverted', async () => {
      const cm = (await getObject('v1', 'ConfigMap', ns, 'drifty')) as
        | { data?: Record<string, string> }
        | undefined;
      return cm?.data?.mode === 'git' && cm.data.extra === undefined;
    });
  });

  test('an object made with kubectl before the first apply is adopted: configured, not created, and its kubectl fields removed', async () => {
    // No inventory lists it, so Mooring dry-runs it first and reads it only because the dry run
    // shows it exists; the take-over of kubectl's fields must still happen.
    await kubectl(
      '-n',
      ns,
      'create',
      'configmap',
      'adopted',
      '--from-literal=mode=kubectl',
      '--from-literal=extra=x',
    );
    const { name: source } = await gitSource(stack, {
      'a/cm.yaml': configMap('adopted', { mode: 'git' }),
      'a/new.yaml': configMap('brand-new', { mode: 'git' }),
    });
    const name = uniqueName('adopt');
    await createKustomization(stack, name, { sourceRef: { kind: 'GitRepository', name: source }, path: 'a' });
    await waitForKustomization(ns, name);
    const cm = (await getObject('v1', 'ConfigMap', ns, 'adopted')) as { data?: Record<string, string> };
    assert.deepEqual(cm.data, { mode: 'git' });
    const event = await eventually('the Progressing event with what changed', async () => {
      const { client } = await testCluster();
      const list = await client.list('v1', 'Event', { namespace: ns });
      return list.items
        .map((e) => e as unknown as { reason?: string; message?: string; involvedObject?: { name?: string } })
        .find((e) => e.involvedObject?.name === name && e.reason === 'Progressing');
    });
    assert.match(event.message ?? '', new RegExp(`ConfigMap/${ns}/adopted configured`));
    assert.match(event.message ?? '', new RegExp(`ConfigMap/${ns}/brand-new created`));
  });

  test('an edit or a delete of an applied object is put back at once, without a reconcile request', async () => {
    const { name: source } = await gitSource(stack, { 'h/cm.yaml': configMap('healing', { mode: 'git' }) });
    const name = uniqueName('heal');
    // The interval (10m) is far beyond the waits below: only the drift itself can wake it.
    await createKustomization(stack, name, { sourceRef: { kind: 'GitRepository', name: source }, path: 'h' });
    await waitForKustomization(ns, name);
    const mode = async () =>
      ((await getObject('v1', 'ConfigMap', ns, 'healing')) as { data?: Record<string, string> } | undefined)
        ?.data?.mode;
    await kubectl(
      '-n',
      ns,
      'patch',
      'configmap',
      'healing',
      '--type=merge',
      '-p',
      '{"data":{"mode":"edited"}}',
    );
    await eventually('the edit reverted', async () => (await mode()) === 'git', 30_000);
    await kubectl('-n', ns, 'delete', 'configmap', 'healing');
    await eventually('the deleted object re-created', async () => (await mode()) === 'git', 30_000);
  });

  test('spec.ignore leaves a field to another writer', async () => {
    const { name: source } = await gitSource(stack, { 'd/deploy.yaml': deployment('scaled') });
    const name = uniqueName('ignore');
    await createKustomization(stack, name, {
      sourceRef: { kind: 'GitRepository', name: source },
      path: 'd',
      ignore: [{ paths: ['/spec/replicas'], target: { kind: 'Deployment' } }],
    });
    await waitForKustomization(ns, name);
    await kubectl('-n', ns, 'scale', 'deployment', 'scaled', '--replicas=3');
    await requestReconcile('Kustomization', ns, name);
    const handled = Date.now();
    await waitForKustomization(
      ns,
      name,
      'True',
      (k) => Date.parse(condition(k, 'Ready')!.lastTransitionTime) <= handled,
    );
    await new Promise((r) => setTimeout(r, 1_500));
    const d = (await getObject('apps/v1', 'Deployment', ns, 'scaled')) as unknown as {
      spec: { replicas: number };
    };
    assert.equal(d.spec.replicas, 3);
  });

  test('an empty render does not prune everything unless allowEmpty is set', async () => {
    const { repo, name: source } = await gitSource(stack, { 'e/a.yaml': configMap('precious', {}) });
    const name = uniqueName('empty');
    await createKustomization(stack, name, { sourceRef: { kind: 'GitRepository', name: source }, path: 'e' });
    await waitForKustomization(ns, name);
    await repo.commit({ 'e/a.yaml': null, 'e/README.md': 'nothing here' });
    await requestReconcile('GitRepository', ns, source);
    const refused = await waitForKustomization(ns, name, 'False');
    assert.equal(condition(refused, 'Ready')!.reason, 'EmptyRenderRefused');
    assert.match(condition(refused, 'Ready')!.message, /allowEmpty/);
    assert.ok(await getObject('v1', 'ConfigMap', ns, 'precious'), 'nothing was pruned');
    const { client } = await testCluster();
    await client.mergePatch(
      { apiVersion: 'kustomize.mooring.dev/v1', kind: 'Kustomization', namespace: ns, name },
      { spec: { allowEmpty: true } },
    );
    await waitForKustomization(ns, name);
    await eventually(
      'pruned once allowed',
      async () => (await getObject('v1', 'ConfigMap', ns, 'precious')) === undefined,
    );
  });

  test('a build error keeps what was applied and says what is wrong', async () => {
    const { repo, name: source } = await gitSource(stack, {
      'b/kustomization.yaml': 'resources: [cm.yaml]\n',
      'b/cm.yaml': configMap('survivor', {}),
    });
    const name = uniqueName('builderr');
    await createKustomization(stack, name, { sourceRef: { kind: 'GitRepository', name: source }, path: 'b' });
    const good = await waitForKustomization(ns, name);
    await repo.commit({ 'b/kustomization.yaml': 'resources: [cm.yaml, missing.yaml]\n' });
    await requestReconcile('GitRepository', ns, source);
    const failed = await waitForKustomization(ns, name, 'False');
    assert.equal(condition(failed, 'Ready')!.reason, 'BuildFailed');
    assert.match(condition(failed, 'Ready')!.message, /missing\.yaml/);
    assert.equal(failed.status!.lastAppliedRevision, good.status!.lastAppliedRevision);
    assert.notEqual(failed.status!.lastAttemptedRevision, good.status!.lastAppliedRevision);
    assert.ok(await getObject('v1', 'ConfigMap', ns, 'survivor'));
  });

  test('an object the API server rejects fails the apply with its reason', async () => {
    const { name: source } = await gitSource(stack, {
      'v/svc.yaml':
        'apiVersion: v1\nkind: Service\nmetadata:\n  name: broken\nspec:\n  ports:\n    - port: 99999\n',
    });
    const name = uniqueName('invalid');
    await createKustomization(stack, name, { sourceRef: { kind: 'GitRepository', name: source }, path: 'v' });
    // Before the source has an artifact the Kustomization waits (Ready False, ArtifactFailed); then the apply fails.
    const failed = await waitForKustomization(
      ns,
      name,
      'False',
      (k) => condition(k, 'Ready')?.reason !== 'ArtifactFailed',
    );
    assert.equal(condition(failed, 'Ready')!.reason, 'ReconciliationFailed');
    assert.match(condition(failed, 'Ready')!.message, /Service\/.*broken.*99999|port/);
  });

  test('overrides: targetNamespace, namePrefix, images and commonMetadata', async () => {
    const { client } = await testCluster();
    const target = uniqueName('target');
    await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: target } });
    try {
      const { name: source } = await gitSource(stack, {
        'o/d.yaml': deployment('api', 'ghcr.io/acme/api:1.0'),
      });
      const name = uniqueName('overrides');
      await createKustomization(stack, name, {
        sourceRef: { kind: 'GitRepository', name: source },
        path: 'o',
        targetNamespace: target,
        namePrefix: 'prod-',
        images: [{ name: 'ghcr.io/acme/api', newTag: '2.0' }],
        commonMetadata: { labels: { team: 'ml' } },
      });
      await waitForKustomization(ns, name);
      const d = (await getObject('apps/v1', 'Deployment', target, 'prod-api')) as unknown as {
        metadata: { labels: Record<string, string> };
        spec: { template: { spec: { containers: { image: string }[] } } };
      };
      assert.equal(d.spec.template.spec.containers[0]!.image, 'ghcr.io/acme/api:2.0');
      assert.equal(d.metadata.labels.team, 'ml');
    } finally {
      await client.delete({ apiVersion: 'v1', kind: 'Namespace', name: target });
    }
  });

  test('buildMetadata on the Kustomization adds origin annotations to what it applies', async () => {
    const { name: source } = await gitSource(stack, { 'bm/origin.yaml': configMap('with-origin', {}) });
    const name = uniqueName('buildmeta');
    await createKustomization(stack, name, {
      sourceRef: { kind: 'GitRepository', name: source },
      path: 'bm',
      buildMetadata: ['originAnnotations'],
    });
    await waitForKustomization(ns, name);
    const cm = await getObject('v1', 'ConfigMap', ns, 'with-origin');
    assert.match(cm?.metadata.annotations?.['config.kubernetes.io/origin'] ?? '', /path: origin\.yaml/);
  });

  test('a CRD and its custom resource apply together, the CRD first', async () => {
    const group = `${uniqueName('widgets')}.example.com`;
    const crd = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.${group}
spec:
  group: ${group}
  names: {kind: Widget, plural: widgets, singular: widget}
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          x-kubernetes-preserve-unknown-fields: true
`;
    const { name: source } = await gitSource(stack, {
      'c/widget.yaml': `apiVersion: ${group}/v1\nkind: Widget\nmetadata:\n  name: w1\nspec:\n  size: 3\n`,
      'c/crd.yaml': crd,
    });
    const name = uniqueName('crd');
    await createKustomization(stack, name, { sourceRef: { kind: 'GitRepository', name: source }, path: 'c' });
    try {
      const ready = await waitForKustomization(ns, name);
      assert.ok(
        ready.status!.inventory!.entries.some(
          (e) => e.id === `_widgets.${group}_apiextensions.k8s.io_CustomResourceDefinition`,
        ),
      );
      assert.ok(await getObject(`${group}/v1`, 'Widget', ns, 'w1'));
    } finally {
      const { client } = await testCluster();
      await client.delete({
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        name: `widgets.${group}`,
      });
    }
  });

  test('per-object policies: ssa IfNotPresent and Ignore, prune disabled', async () => {
    const marked = (name: string, key: string, value: string, data: string) =>
      configMap(name, { v: data }, `  annotations:\n    kustomize.mooring.dev/${key}: ${value}\n`);
    const { repo, name: source } = await gitSource(stack, {
      'p/once.yaml': marked('created-once', 'ssa', 'IfNotPresent', '1'),
      'p/never.yaml': marked('never-applied', 'ssa', 'Ignore', '1'),
      'p/kept.yaml': marked('kept-forever', 'prune', 'disabled', '1'),
    });
    const name = uniqueName('policies');
    await createKustomization(stack, name, { sourceRef: { kind: 'GitRepository', name: source }, path: 'p' });
    await waitForKustomization(ns, name);
    assert.ok(await getObject('v1', 'ConfigMap', ns, 'created-once'));
    assert.equal(await getObject('v1', 'ConfigMap', ns, 'never-applied'), undefined);
    const commit = await repo.commit({
      'p/once.yaml': marked('created-once', 'ssa', 'IfNotPresent', '2'),
      'p/kept.yaml': null,
    });
    await requestReconcile('GitRepository', ns, source);
    await waitForKustomization(
      ns,
      name,
      'True',
      (k) => k.status?.lastAppliedRevision === `main@sha1:${commit}`,
    );
    const once = (await getObject('v1', 'ConfigMap', ns, 'created-once')) as unknown as {
      data: { v: string };
    };
    assert.equal(once.data.v, '1', 'IfNotPresent never updates');
    assert.ok(
      await getObject('v1', 'ConfigMap', ns, 'kept-forever'),
      'prune: disabled survives removal from Git',
    );
  });

  test('an immutable field change fails, and recreates the object when forced', async () => {
    const frozen = (data: string, force = false) =>
      `${configMap('frozen', { v: data }, force ? '  annotations:\n    kustomize.mooring.dev/force: Enabled\n' : '')}immutable: true\n`;
    const { repo, name: source } = await gitSource(stack, { 'i/cm.yaml': frozen('1') });
    const name = uniqueName('immutable');
    await createKustomization(stack, name, { sourceRef: { kind: 'GitRepository', name: source }, path: 'i' });
    await waitForKustomization(ns, name);
    const before = await getObject('v1', 'ConfigMap', ns, 'frozen');
    await repo.commit({ 'i/cm.yaml': frozen('2') });
    await requestReconcile('GitRepository', ns, source);
    const failed = await waitForKustomization(
      ns,
      name,
      'False',
      (k) => condition(k, 'Ready')?.reason === 'ReconciliationFailed',
    );
    assert.match(condition(failed, 'Ready')!.message, /immutable/i);
    const commit = await repo.commit({ 'i/cm.yaml': frozen('2', true) });
    await requestReconcile('GitRepository', ns, source);
    await waitForKustomization(
      ns,
      name,
      'True',
      (k) => k.status?.lastAppliedRevision === `main@sha1:${commit}`,
    );
    const after = (await getObject('v1', 'ConfigMap', ns, 'frozen')) as unknown as {
      metadata: { uid: string };
      data: { v: string };
    };
    assert.equal(after.data.v, '2');
    assert.notEqual(after.metadata.uid, before!.metadata.uid, 'a new object');
  });

  test('a reconcile with nothing new sends no apply and renders nothing', async () => {
    const { name: source } = await gitSource(stack, { 's/a.yaml': configMap('steady', { a: '1' }) });
    const name = uniqueName('steady');
    await createKustomization(stack, name, { sourceRef: { kind: 'GitRepository', name: source }, path: 's' });
    const first = await waitForKustomization(ns, name);
    const cm = await getObject('v1', 'ConfigMap', ns, 'steady');
    await requestReconcile('Kustomization', ns, name);
    await eventually('handled', async () => {
      const k = await (await import('./fixture.ts')).getKustomization(ns, name);
      return k.status?.lastHandledReconcileAt !== first.status?.lastHandledReconcileAt;
    });
    const again = await getObject('v1', 'ConfigMap', ns, 'steady');
    assert.equal(again!.metadata.resourceVersion, cm!.metadata.resourceVersion, 'the object was not written');
  });
});
