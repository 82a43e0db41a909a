// The deletion budget end to end: a commit that deletes most of a folder is refused (condition,
// event, the list, nothing deleted, the rest applied), `mooring approve prune` lets exactly that
// revision's prune through, a small deletion goes ahead, and raising the budget lets one through.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KUSTOMIZE_API_VERSION, SOURCE_API_VERSION } from '@mooring/api';
import type { KubeClient, KubeObject } from '@mooring/runtime';
import { eventually, GitServer, testCluster, testNamespace, waitForReady } from '@mooring/test/harness';
import { startGitOpsOperators } from './gitops-operators.ts';
import { mooring } from './run-cli.ts';

interface Ks extends KubeObject {
  status?: {
    conditions?: { type: string; status: string; reason: string; message: string }[];
    lastAppliedRevision?: string;
    inventory?: { entries: { id: string }[] };
    prunePending?: { revision: string; count: number; budget: number; objects: string[] };
    lastHandledPruneApproval?: string;
  };
}

const cm = (name: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  k: v\n`;
const files = (names: string[]) => Object.fromEntries(names.map((n) => [`deploy/${n}.yaml`, cm(n)]));
const range = (n: number) => Array.from({ length: n }, (_, i) => `cm-${i}`);

async function setUp(t: Parameters<typeof testNamespace>[0], prefix: string, objects: string[], spec = {}) {
  const ns = await testNamespace(t, prefix);
  const { client, kubeconfig } = await testCluster();
  const git = await GitServer.start();
  t.after(() => git.close());
  const repo = await git.createRepo('app');
  await repo.commit(files(objects));
  await startGitOpsOperators(t, ns);
  await client.create({
    apiVersion: SOURCE_API_VERSION,
    kind: 'GitRepository',
    metadata: { name: 'app', namespace: ns },
    spec: { url: repo.url, interval: '1h', ref: { branch: 'main' } },
  } as KubeObject);
  await client.create({
    apiVersion: KUSTOMIZE_API_VERSION,
    kind: 'Kustomization',
    metadata: { name: 'apps', namespace: ns },
    spec: {
      sourceRef: { kind: 'GitRepository', name: 'app' },
      path: './deploy',
      interval: '1h',
      prune: true,
      ...spec,
    },
  } as KubeObject);
  const key = { apiVersion: KUSTOMIZE_API_VERSION, kind: 'Kustomization', namespace: ns, name: 'apps' };
  await waitForReady<Ks>(key, 'True', () => true, 60_000);
  /** Commits `changes` and has the GitRepository fetch them now; returns the revision. */
  const push = async (changes: Record<string, string | null>) => {
    const commit = await repo.commit(changes);
    await client.mergePatch(
      { apiVersion: SOURCE_API_VERSION, kind: 'GitRepository', namespace: ns, name: 'app' },
      { metadata: { annotations: { 'reconcile.mooring.dev/requestedAt': `${Date.now()}` } } },
    );
    return `main@sha1:${commit}`;
  };
  return { ns, client, env: { KUBECONFIG: kubeconfig }, key, push };
}

const exists = async (client: KubeClient, ns: string, name: string) =>
  (await client.getOrUndefined({ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name })) !== undefined;

test('a commit that deletes most of a folder is refused with the list and an event, and nothing is deleted until that revision is approved', async (t) => {
  const { ns, client, env, key, push } = await setUp(t, 'budget-approve', range(10));

  // One of ten is within the default budget (50%): deleted as before.
  const small = await push({ 'deploy/cm-0.yaml': null });
  await waitForReady<Ks>(key, 'True', (k) => k.status?.lastAppliedRevision === small, 60_000);
  await eventually('cm-0 pruned', async () => !(await exists(client, ns, 'cm-0')));

  // Seven of nine is over it (5): refused, while the rest of the revision is still applied.
  const nothing = await mooring(['approve', 'prune', 'ks/apps', '-n', ns], { env });
  assert.equal(nothing.code, 1);
  assert.match(nothing.stderr, /has no prune waiting for approval/);
  const doomed = range(8).slice(1);
  const big = await push({
    ...Object.fromEntries(doomed.map((n) => [`deploy/${n}.yaml`, null])),
    'deploy/added.yaml': cm('added'),
  });
  const refused = await waitForReady<Ks>(
    key,
    'False',
    (k) => k.status?.prunePending?.revision === big,
    60_000,
  );
  const ready = refused.status!.conditions!.find((c) => c.type === 'Ready')!;
  assert.equal(ready.reason, 'PruneBudgetExceeded');
  assert.match(ready.message, /would delete 7 of 9 objects, over the deletion budget of 5 \(50% of 9\)/);
  assert.match(ready.message, new RegExp(`ConfigMap/${ns}/cm-1, `));
  assert.match(ready.message, new RegExp(`mooring approve prune ks/apps -n ${ns}`));
  assert.deepEqual(refused.status!.prunePending, {
    revision: big,
    count: 7,
    budget: 5,
    objects: doomed.map((n) => `ConfigMap/${ns}/${n}`),
  });
  for (const n of doomed) assert.ok(await exists(client, ns, n), `${n} kept`);
  assert.ok(await exists(client, ns, 'added'), 'the rest of the revision is applied');
  const ids = refused.status!.inventory!.entries.map((e) => e.id);
  for (const n of doomed) assert.ok(ids.includes(`${ns}_${n}__ConfigMap`), `${n} stays in the inventory`);
  const events = await eventually('the PruneBudgetExceeded event', async () => {
    const list = await client.list('v1', 'Event', { namespace: ns });
    const found = list.items.filter(
      (e) => (e as { reason?: string }).reason === 'PruneBudgetExceeded',
    ) as (KubeObject & { type?: string; message?: string })[];
    return found.length ? found : undefined;
  });
  assert.equal(events[0]!.type, 'Warning');
  assert.match(events[0]!.message ?? '', /would delete 7 of 9 objects/);

  const approved = await mooring(['approve', 'prune', 'ks/apps', '-n', ns, '--timeout', '2m'], { env });
  assert.equal(approved.code, 0, approved.stdout + approved.stderr);
  assert.match(
    approved.stderr,
    new RegExp(`approving the prune of 7 objects \\(budget 5\\).*at revision ${big}`),
  );
  assert.match(approved.stdout, new RegExp(`✔ Kustomization ${ns}/apps pruned 7 objects at revision ${big}`));
  for (const n of doomed) await eventually(`${n} pruned`, async () => !(await exists(client, ns, n)));
  const done = await waitForReady<Ks>(key, 'True', (k) => k.status?.lastHandledPruneApproval === big, 60_000);
  assert.equal(done.status?.prunePending, undefined);
  assert.deepEqual(
    done.status!.inventory!.entries.map((e) => e.id),
    [`${ns}_added__ConfigMap`, `${ns}_cm-8__ConfigMap`, `${ns}_cm-9__ConfigMap`],
  );

  // The approval was for that revision only: the next big deletion is refused again.
  const again = await push({
    'deploy/cm-8.yaml': null,
    'deploy/cm-9.yaml': null,
    'deploy/added.yaml': null,
    'deploy/later.yaml': cm('later'),
  });
  await waitForReady<Ks>(key, 'False', (k) => k.status?.prunePending?.revision === again, 60_000);
  assert.ok(await exists(client, ns, 'cm-8'));
});

test('raising spec.deletionBudget lets a refused prune through', async (t) => {
  const { ns, client, key, push } = await setUp(t, 'budget-raise', range(4), { deletionBudget: 1 });
  const revision = await push({ 'deploy/cm-0.yaml': null, 'deploy/cm-1.yaml': null });
  await waitForReady<Ks>(key, 'False', (k) => k.status?.prunePending?.revision === revision, 60_000);
  assert.ok(await exists(client, ns, 'cm-0'));
  await client.mergePatch(key, { spec: { deletionBudget: '50%' } });
  await waitForReady<Ks>(key, 'True', (k) => k.status?.lastAppliedRevision === revision, 60_000);
  await eventually(
    'cm-0 and cm-1 pruned',
    async () => !(await exists(client, ns, 'cm-0')) && !(await exists(client, ns, 'cm-1')),
  );
  assert.ok(await exists(client, ns, 'cm-2'));
  // A budget the schema refuses never reaches the operator.
  await assert.rejects(
    client.mergePatch(key, { spec: { deletionBudget: '150%' } }),
    /deletionBudget must be a count/,
  );
});
