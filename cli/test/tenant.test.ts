import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { kustomizeOperator } from '@mooring/kustomize-operator';
import type { KubeObject } from '@mooring/runtime';
import { sourceOperator } from '@mooring/source-operator';
import {
  eventually,
  GitServer,
  startInProcessOperators,
  testCluster,
  testNamespace,
  uniqueName,
  waitForReady,
} from '@mooring/test/harness';
import { parseAllDocuments } from 'yaml';
import { mooring } from './run-cli.ts';

const TENANT_LABEL = 'mooring.dev/tenant';
const KS = 'kustomize.mooring.dev/v1';

interface RoleBinding extends KubeObject {
  roleRef: { kind: string; name: string };
  subjects: { kind: string; name: string; namespace?: string }[];
}

const configMap = (namespace: string, name: string): string =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: ${namespace}\ndata:\n  team: dev\n`;

test('create tenant --export prints Namespace, ServiceAccount and RoleBinding per namespace, and the server accepts them', async (t) => {
  // Existing namespaces, so the server can dry-run the namespaced objects into them.
  const [first, second] = [await testNamespace(t, 'tenant-exp-a'), await testNamespace(t, 'tenant-exp-b')];
  const { client, kubeconfig } = await testCluster();
  const r = await mooring(
    [
      'create',
      'tenant',
      'dev-team',
      '--with-namespace',
      first,
      '--with-namespace',
      second,
      '--cluster-role',
      'edit',
      '--account',
      'deployer',
      '--label',
      'team=dev',
      '--export',
    ],
    { env: { KUBECONFIG: kubeconfig } },
  );
  assert.equal(r.code, 0, r.stderr);
  const docs = parseAllDocuments(r.stdout).map((d) => d.toJS() as KubeObject);
  assert.deepEqual(
    docs.map((d) => `${d.kind} ${d.metadata.namespace ?? ''}/${d.metadata.name}`),
    [first, second].flatMap((ns) => [
      `Namespace /${ns}`,
      `ServiceAccount ${ns}/deployer`,
      `RoleBinding ${ns}/dev-team-reconciler`,
    ]),
  );
  for (const doc of docs) {
    assert.deepEqual(doc.metadata.labels, { team: 'dev', [TENANT_LABEL]: 'dev-team' });
    await client.apply(doc, { fieldManager: 'mooring-cli-test', dryRun: true });
  }
  const binding = docs[2] as RoleBinding;
  assert.deepEqual(binding.roleRef, {
    apiGroup: 'rbac.authorization.k8s.io',
    kind: 'ClusterRole',
    name: 'edit',
  });
  assert.deepEqual(binding.subjects, [
    { apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: `mooring:${first}:reconciler` },
    { kind: 'ServiceAccount', name: 'deployer', namespace: first },
  ]);
  // --export never applied anything.
  const sa = await client.getOrUndefined({
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    namespace: first,
    name: 'deployer',
  });
  assert.equal(sa, undefined);
});

test('create tenant refuses names that are not DNS-1123, before touching the cluster', async () => {
  const cases: [string[], RegExp][] = [
    [['Dev', '--with-namespace', 'dev'], /^✗ tenant name 'Dev' is not a DNS-1123 label: use /],
    [
      ['dev', '--with-namespace', 'apps,Bad_NS'],
      /^✗ --with-namespace 'Bad_NS' is not a DNS-1123 label: use /,
    ],
    [
      ['dev', '--with-namespace', 'apps', '--account', 'a/b'],
      /^✗ --account 'a\/b' is not a DNS-1123 subdomain/,
    ],
  ];
  const results = await Promise.all(
    cases.map(([args]) => mooring(['create', 'tenant', ...args], { env: { KUBECONFIG: '/nonexistent' } })),
  );
  for (const [i, r] of results.entries()) {
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, cases[i]![1]);
    assert.equal(r.stdout, '');
  }
});

test("a tenant's ServiceAccount lets a Kustomization apply in the tenant's namespace and nowhere else", async (t) => {
  const { client, kubeconfig } = await testCluster();
  const env = { KUBECONFIG: kubeconfig };
  // Cleanup runs last-registered first: Kustomizations go while the operator can still finalize them.
  const cleanup: (() => Promise<unknown>)[] = [];
  t.after(async () => {
    for (const step of cleanup.reverse()) await step().catch(() => undefined);
  });
  const outside = await testNamespace(t, 'tenant-outside');
  const [home, second] = [uniqueName('tenant-home'), uniqueName('tenant-second')];
  const tenant = uniqueName('dev');
  for (const ns of [home, second])
    cleanup.push(() => client.delete({ apiVersion: 'v1', kind: 'Namespace', name: ns }));

  const created = await mooring(['create', 'tenant', tenant, '--with-namespace', `${home},${second}`], {
    env,
  });
  assert.equal(created.code, 0, created.stderr);
  assert.equal(
    created.stdout,
    [home, second]
      .map(
        (ns) =>
          `✔ Namespace ${ns} applied\n✔ ServiceAccount ${ns}/${tenant} applied\n✔ RoleBinding ${ns}/${tenant}-reconciler applied\n`,
      )
      .join(''),
  );
  // The tenant label finds everything the command made.
  const selector = { labelSelector: `${TENANT_LABEL}=${tenant}` };
  const [namespaces, bindings] = await Promise.all([
    client.list('v1', 'Namespace', selector),
    client.list<RoleBinding>('rbac.authorization.k8s.io/v1', 'RoleBinding', selector),
  ]);
  assert.deepEqual(namespaces.items.map((n) => n.metadata.name).sort(), [home, second].sort());
  assert.deepEqual(bindings.items.map((b) => b.metadata.namespace).sort(), [home, second].sort());
  assert.ok(bindings.items.every((b) => b.roleRef.name === 'cluster-admin'));

  const git = await GitServer.start();
  cleanup.push(() => git.close());
  const repo = await git.createRepo('tenant');
  await repo.commit({
    'own/cm.yaml': configMap(home, 'inside'),
    'escape/cm.yaml': configMap(outside, 'escaped'),
  });
  const storage = await mkdtemp(join(tmpdir(), 'mooring-cli-tenant-'));
  cleanup.push(() => rm(storage, { recursive: true, force: true }));
  const operators = await startInProcessOperators([sourceOperator(), kustomizeOperator()], home, [
    '--storage-path',
    storage,
    '--storage-addr',
    '127.0.0.1:0',
  ]);
  cleanup.push(() => operators.stop());

  const ksArgs = [
    '--source',
    'GitRepository/repo',
    '--prune',
    '--interval',
    '1h',
    '--service-account',
    tenant,
  ];
  for (const args of [
    ['create', 'source', 'git', 'repo', '--url', repo.url, '--interval', '1h'],
    ['create', 'ks', 'own', '--path', './own', ...ksArgs],
    ['create', 'ks', 'escape', '--path', './escape', ...ksArgs],
  ]) {
    const r = await mooring([...args, '-n', home], { env });
    assert.equal(r.code, 0, r.stderr);
  }
  for (const name of ['own', 'escape'])
    cleanup.push(async () => {
      await client.delete({ apiVersion: KS, kind: 'Kustomization', namespace: home, name });
      await eventually(
        `Kustomization ${name} finalized`,
        async () => {
          const left = await client.getOrUndefined({
            apiVersion: KS,
            kind: 'Kustomization',
            namespace: home,
            name,
          });
          return left === undefined;
        },
        30_000,
      );
    });

  await waitForReady(
    { apiVersion: KS, kind: 'Kustomization', namespace: home, name: 'own' },
    'True',
    () => true,
    60_000,
  );
  const inside = await client.getOrUndefined({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    namespace: home,
    name: 'inside',
  });
  assert.equal(inside?.data && (inside.data as Record<string, string>).team, 'dev');

  const refused = await waitForReady(
    { apiVersion: KS, kind: 'Kustomization', namespace: home, name: 'escape' },
    'False',
    () => true,
    60_000,
  );
  const ready = refused.status?.conditions?.find((c) => c.type === 'Ready');
  assert.match(ready!.message, /forbidden/i);
  assert.match(ready!.message, new RegExp(`system:serviceaccount:${home}:${tenant}`));
  const escaped = await client.getOrUndefined({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    namespace: outside,
    name: 'escaped',
  });
  assert.equal(escaped, undefined);
});
