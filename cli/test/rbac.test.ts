import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApiError, type Impersonation, type KubeObject } from '@mooring/runtime';
import { eventually, testCluster, testNamespace } from '@mooring/test/harness';
import { installManifests } from '../src/install-manifests.ts';

// config/'s ClusterRoles, bound (under per-test names) to ServiceAccounts in a test namespace, then
// exercised by impersonating each operator's ServiceAccount.
test("each operator's ServiceAccount can do its job and nothing it has no business doing", async (t) => {
  const ns = await testNamespace(t, 'cli-rbac');
  const { client } = await testCluster();
  const objects = await installManifests(undefined);
  const suffix = `-${ns}`;
  for (const role of objects.filter((o) => o.kind === 'ClusterRole')) {
    const obj = { ...role, metadata: { name: `${role.metadata.name}${suffix}` } };
    await client.apply(obj, { fieldManager: 'mooring-cli-test', force: true });
    t.after(() => client.delete({ apiVersion: obj.apiVersion, kind: obj.kind, name: obj.metadata.name }));
  }
  const ours = new Set(objects.filter((o) => o.kind === 'ClusterRole').map((o) => o.metadata.name));
  for (const binding of objects.filter((o) => o.kind === 'ClusterRoleBinding')) {
    const roleName = (binding.roleRef as { name: string }).name;
    const obj = {
      ...binding,
      metadata: { name: `${binding.metadata.name}${suffix}` },
      // Built-in roles (cluster-admin for mooring-reconciler) keep their name.
      roleRef: {
        ...(binding.roleRef as object),
        name: ours.has(roleName) ? `${roleName}${suffix}` : roleName,
      },
      subjects: (binding.subjects as { kind: string; name: string }[]).map((s) => ({ ...s, namespace: ns })),
    };
    await client.apply(obj, { fieldManager: 'mooring-cli-test', force: true });
    t.after(() => client.delete({ apiVersion: obj.apiVersion, kind: obj.kind, name: obj.metadata.name }));
  }
  // The API server adds a service account's groups itself when none are impersonated.
  const as = (sa: string): Impersonation => ({ user: `system:serviceaccount:${ns}:${sa}` });
  const allowed = async (sa: string, call: (who: Impersonation) => Promise<unknown>): Promise<boolean> => {
    try {
      await call(as(sa));
      return true;
    } catch (err) {
      if (err instanceof ApiError && err.statusCode === 403) return false;
      throw err;
    }
  };
  const list = (apiVersion: string, kind: string) => (who: Impersonation) =>
    client.list(apiVersion, kind, { namespace: ns, impersonate: who });
  const createDeployment = (who: Impersonation) =>
    client.request({
      method: 'POST',
      path: `/apis/apps/v1/namespaces/${ns}/deployments`,
      query: { dryRun: 'All' },
      impersonate: who,
      body: {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'web' },
        spec: {
          selector: { matchLabels: { app: 'web' } },
          template: {
            metadata: { labels: { app: 'web' } },
            spec: { containers: [{ name: 'c', image: 'nginx' }] },
          },
        },
      } satisfies KubeObject,
    });
  const patchKustomization = (who: Impersonation) =>
    client
      .request({
        method: 'PATCH',
        path: `/apis/kustomize.mooring.dev/v1/namespaces/${ns}/kustomizations/none`,
        contentType: 'application/merge-patch+json',
        body: { metadata: { annotations: { a: 'b' } } },
        impersonate: who,
      })
      .catch((err: unknown) => {
        // Allowed but absent is what "may patch" looks like for an object that does not exist.
        if (err instanceof ApiError && err.isNotFound) return undefined;
        throw err;
      });

  // RBAC changes reach the authorizer within moments; wait for the first grant to be visible.
  await eventually(
    'the bindings take effect',
    () => allowed('source', list('source.mooring.dev/v1', 'GitRepository')),
    15_000,
  );

  /** Whether `who` may `verb` `resource` (in `namespace`): a SubjectAccessReview, for verbs such as impersonate. */
  const may = (resource: string, verb: string, namespace?: string) => async (who: Impersonation) => {
    const review = (await client.create({
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      metadata: {},
      spec: {
        user: who.user,
        groups: ['system:serviceaccounts', `system:serviceaccounts:${ns}`, 'system:authenticated'],
        resourceAttributes: { resource, verb, namespace, name: 'x' },
      },
    } as unknown as KubeObject)) as KubeObject & { status?: { allowed?: boolean } };
    if (!review.status?.allowed) throw new ApiError('POST', 'subjectaccessreviews', 403, undefined, 'denied');
  };
  const table: [string, string, (who: Impersonation) => Promise<unknown>, boolean][] = [
    ['source', 'list GitRepositories', list('source.mooring.dev/v1', 'GitRepository'), true],
    ['source', 'read Secrets (source credentials)', list('v1', 'Secret'), true],
    ['source', 'create Deployments', createDeployment, false],
    ['source', 'patch Kustomizations', patchKustomization, false],
    // The kustomize operator writes as the service accounts it impersonates, never as itself.
    ['kustomize', 'create Deployments', createDeployment, false],
    ['kustomize', 'read Secrets (decryption keys, kubeconfigs)', list('v1', 'Secret'), true],
    ['kustomize', 'patch Kustomizations', patchKustomization, true],
    ['kustomize', 'impersonate service accounts', may('serviceaccounts', 'impersonate', 'team'), true],
    ['kustomize', 'impersonate groups (system:masters)', may('groups', 'impersonate'), false],
    ['kustomize', 'impersonate users', may('users', 'impersonate'), false],
    ['mooring-reconciler', 'create Deployments (the platform Kustomizations)', createDeployment, true],
    ['notification', 'patch Kustomizations (receivers)', patchKustomization, true],
    ['notification', 'read ConfigMaps', list('v1', 'ConfigMap'), false],
    ['notification', 'create Deployments', createDeployment, false],
    ['image-automation', 'list ImagePolicies', list('image.mooring.dev/v1', 'ImagePolicy'), true],
    ['image-automation', 'patch Kustomizations', patchKustomization, false],
    ['image-automation', 'create Deployments', createDeployment, false],
  ];
  for (const [sa, what, call, expected] of table)
    assert.equal(await allowed(sa, call), expected, `${sa} ${expected ? 'should' : 'must not'} ${what}`);
});
