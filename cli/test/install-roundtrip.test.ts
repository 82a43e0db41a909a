import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KINDS } from '@mooring/api';
import { privateControlPlane } from '@mooring/test/harness';
import { mooring } from './run-cli.ts';

// A throwaway control plane of its own: uninstall removes CRDs, which the shared test plane needs.
test('install applies config/ (idempotently), check sees it, uninstall --yes removes objects and CRDs', async (t) => {
  const plane = await privateControlPlane(t);
  const env = { KUBECONFIG: plane.kubeconfig };
  const { client } = plane;

  const first = await mooring(['install'], { env });
  assert.equal(first.code, 0, first.stderr);
  assert.match(
    first.stderr,
    /► applying \d+ CRDs and namespaces\n✔ CRDs established\n► applying \d+ objects\n/,
  );
  const again = await mooring(['install'], { env });
  assert.equal(again.code, 0, again.stderr);
  const dep = await client.get({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    namespace: 'mooring-system',
    name: 'kustomize',
  });
  assert.equal(dep.metadata.name, 'kustomize');

  // No kubelet runs here, so the operators never become Available: check says so and exits 1.
  const check = await mooring(['check'], { env });
  assert.equal(check.code, 1);
  assert.match(check.stdout, /^✗ Deployment mooring-system\/source not available: see kubectl describe$/m);

  // A Mooring object with a finalizer must not block the uninstall.
  await client.create({
    apiVersion: 'source.mooring.dev/v1',
    kind: 'GitRepository',
    metadata: { name: 'held', namespace: 'default', finalizers: ['finalizers.mooring.dev'] },
    spec: { url: 'https://example.com/x.git', interval: '1m' },
  });
  // This plane runs no kube-controller-manager, so no namespace controller ever empties
  // mooring-system: uninstall waits for it, then says what it is still waiting for.
  const gone = await mooring(['uninstall', '--yes', '--timeout', '2s'], { env });
  assert.equal(gone.code, 1, gone.stderr);
  assert.match(
    gone.stderr,
    new RegExp(`^◎ waiting for namespace mooring-system and ${KINDS.length} CRDs to be removed$`, 'm'),
  );
  assert.match(
    gone.stderr,
    /^✗ namespace mooring-system is still terminating after 2s: nothing has removed its content yet \(the namespace controller of kube-controller-manager does\)[^\n]*; see 'kubectl get namespace mooring-system -o yaml'[^\n]*\n$/m,
  );
  assert.match(gone.stdout, /^deleted GitRepository default\/held$/m);
  assert.match(gone.stdout, /^deleted CustomResourceDefinition gitrepositories\.source\.mooring\.dev$/m);
  const crds = await client.list('apiextensions.k8s.io/v1', 'CustomResourceDefinition');
  const left = crds.items.filter(
    (c) => c.metadata.name?.endsWith('.mooring.dev') && !c.metadata.deletionTimestamp,
  );
  assert.deepEqual(
    left.map((c) => c.metadata.name),
    [],
  );
});

// A plane with kube-controller-manager, whose namespace controller really removes mooring-system.
test('uninstall waits until the namespace and CRDs are gone, so an install right after succeeds', async (t) => {
  const plane = await privateControlPlane(t, { workloads: true });
  const env = { KUBECONFIG: plane.kubeconfig };
  const { client } = plane;
  const first = await mooring(['install'], { env });
  assert.equal(first.code, 0, first.stderr);
  const gone = await mooring(['uninstall', '--yes'], { env });
  assert.equal(gone.code, 0, gone.stderr);
  assert.match(gone.stdout, /✔ Mooring uninstalled\n$/);
  // Gone when uninstall returns, not merely terminating.
  const namespace = await client.getOrUndefined({
    apiVersion: 'v1',
    kind: 'Namespace',
    name: 'mooring-system',
  });
  assert.equal(namespace, undefined, `namespace still there: ${JSON.stringify(namespace?.status)}`);
  const crds = await client.list('apiextensions.k8s.io/v1', 'CustomResourceDefinition');
  assert.deepEqual(
    crds.items.map((c) => c.metadata.name).filter((n) => n?.endsWith('.mooring.dev')),
    [],
  );
  const again = await mooring(['install'], { env });
  assert.equal(again.code, 0, again.stderr);
});
