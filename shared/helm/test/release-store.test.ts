// ReleaseStore on the real control plane, checked by the real helm (bin/helm, v3.22.0) pointed at
// the same cluster: the records Mooring writes are the ones `helm ls`, `helm history`,
// `helm get values` and `helm get manifest` show; a release `helm install` made is read back for
// adoption; and `helm upgrade` and `helm rollback` accept a revision Mooring wrote.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it, type TestContext } from 'node:test';
import { promisify } from 'node:util';
import { ApiError, type Impersonation, type KubeClient } from '@mooring/runtime';
import { eventually, testCluster, testNamespace } from '@mooring/test/harness';
import { parseAllDocuments } from 'yaml';
import {
  chartRecordOf,
  HelmRendererPool,
  helmTime,
  type JsonObject,
  ReleaseExistsError,
  type ReleaseRecord,
  ReleaseRecordError,
  ReleaseStore,
  renderChart,
  splitRender,
} from '../src/index.ts';
import { HELM } from './helm-oracle.ts';

const chartDir = join(import.meta.dirname, 'testdata/hooks-chart');
const limits = { timeoutMs: 120_000, memoryBytes: 1 << 30 };
const home = mkdtempSync(join(tmpdir(), 'mooring-release-store-helm-'));

let client: KubeClient;
let kubeconfig: string;
const pool = new HelmRendererPool({ size: 1 });

before(async () => {
  ({ client, kubeconfig } = await testCluster());
});
after(() => {
  pool.close();
  rmSync(home, { recursive: true, force: true });
});

/** bin/helm against the test cluster; resolves to stdout, rejects with helm's stderr. */
async function helm(...args: string[]): Promise<string> {
  try {
    const { stdout } = await promisify(execFile)(HELM, [...args, '--kubeconfig', kubeconfig], {
      env: { HOME: home, PATH: '/usr/bin:/bin' },
      maxBuffer: 16 << 20,
    });
    return stdout;
  } catch (err) {
    throw new Error(`helm ${args.join(' ')}: ${(err as { stderr?: string }).stderr ?? err}`);
  }
}

/**
 * A namespace with a service account that may do what Helm's storage does with Secrets there and
 * nothing else, and the impersonation a HelmRelease naming it gets.
 */
async function namespaceWithWriter(
  t: TestContext,
  prefix: string,
): Promise<{ ns: string; as: Impersonation }> {
  const ns = await testNamespace(t, prefix);
  await client.create({
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: { name: 'deployer', namespace: ns },
  });
  await client.create({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name: 'release-records', namespace: ns },
    rules: [
      { apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'create', 'update', 'delete'] },
    ],
  });
  await client.create({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: 'deployer', namespace: ns },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'release-records' },
    subjects: [{ kind: 'ServiceAccount', name: 'deployer', namespace: ns }],
  });
  const as = { user: `system:serviceaccount:${ns}:deployer` };
  // The API server's RBAC authorizer learns of the binding from its own watch: poll until it has.
  await eventually('the RoleBinding takes effect', async () => {
    try {
      await new ReleaseStore(client, { namespace: ns, impersonate: as }).history('probe');
      return true;
    } catch (err) {
      if (err instanceof ApiError && err.statusCode === 403) return false;
      throw err;
    }
  });
  return { ns, as };
}

/** A revision as the HelmRelease reconciler would make it: rendered by the sandbox, split, recorded. */
async function revision(
  ns: string,
  version: number,
  config: JsonObject,
  status: 'pending-install' | 'pending-upgrade',
  firstDeployed?: string,
): Promise<ReleaseRecord> {
  const stream = await renderChart({
    chartDir,
    releaseName: 'demo',
    namespace: ns,
    values: [config],
    revision: version,
    isUpgrade: version > 1,
    limits,
    pool,
  });
  const { manifest, hooks } = splitRender(stream);
  const now = helmTime(new Date());
  return {
    name: 'demo',
    info: {
      first_deployed: firstDeployed ?? now,
      last_deployed: now,
      deleted: '',
      description: version > 1 ? 'Preparing upgrade' : 'Initial install underway',
      status,
    },
    chart: chartRecordOf(chartDir),
    config,
    manifest,
    hooks,
    version,
    namespace: ns,
  };
}

/** What a reconciler does once the revision's objects are applied: deployed, the previous superseded. */
async function deploy(store: ReleaseStore, record: ReleaseRecord, previous?: ReleaseRecord): Promise<void> {
  if (previous) {
    previous.info.status = 'superseded';
    previous.info.description = 'Superseded';
    await store.update(previous);
  }
  record.info.status = 'deployed';
  record.info.description = previous ? 'Upgrade complete' : 'Install complete';
  await store.update(record);
}

/** Applies a manifest's objects, as Mooring's apply would, so that helm finds them in the cluster. */
async function applyManifest(ns: string, manifest: string): Promise<void> {
  for (const doc of parseAllDocuments(manifest)) {
    const obj = doc.toJS() as {
      apiVersion: string;
      kind: string;
      metadata: { name: string; namespace?: string };
    };
    if (!obj) continue;
    obj.metadata.namespace = ns;
    await client.apply(obj, { fieldManager: 'mooring-test', force: true });
  }
}

interface HelmListEntry {
  name: string;
  namespace: string;
  revision: string;
  status: string;
  chart: string;
  app_version: string;
}
interface HelmHistoryEntry {
  revision: number;
  status: string;
  chart: string;
  app_version: string;
  description: string;
}

describe('ReleaseStore on the real control plane', { timeout: 600_000 }, () => {
  it('writes revisions 1 and 2 that helm ls, history, get values and get manifest show', async (t) => {
    const { ns, as } = await namespaceWithWriter(t, 'release-store-write');
    const store = new ReleaseStore(client, { namespace: ns, impersonate: as });

    const v1 = await revision(ns, 1, { greeting: 'one' }, 'pending-install');
    await store.create(v1);
    assert.equal((await store.latest('demo'))?.info.status, 'pending-install');
    assert.equal(await store.lastDeployed('demo'), undefined);
    await applyManifest(ns, v1.manifest ?? '');
    await deploy(store, v1);

    const v2 = await revision(
      ns,
      2,
      { greeting: 'two', replicas: 3 },
      'pending-upgrade',
      v1.info.first_deployed,
    );
    await store.create(v2);
    await applyManifest(ns, v2.manifest ?? '');
    await deploy(store, v2, v1);

    const list = JSON.parse(await helm('ls', '-n', ns, '-o', 'json')) as HelmListEntry[];
    assert.deepEqual(
      list.map(({ name, namespace, revision, status, chart, app_version }) => ({
        name,
        namespace,
        revision,
        status,
        chart,
        app_version,
      })),
      [
        {
          name: 'demo',
          namespace: ns,
          revision: '2',
          status: 'deployed',
          chart: 'hooks-chart-0.1.0',
          app_version: '1.0.0',
        },
      ],
    );
    const history = JSON.parse(await helm('history', 'demo', '-n', ns, '-o', 'json')) as HelmHistoryEntry[];
    assert.deepEqual(
      history.map(({ revision, status, chart, app_version, description }) => ({
        revision,
        status,
        chart,
        app_version,
        description,
      })),
      [
        {
          revision: 1,
          status: 'superseded',
          chart: 'hooks-chart-0.1.0',
          app_version: '1.0.0',
          description: 'Superseded',
        },
        {
          revision: 2,
          status: 'deployed',
          chart: 'hooks-chart-0.1.0',
          app_version: '1.0.0',
          description: 'Upgrade complete',
        },
      ],
    );
    assert.deepEqual(JSON.parse(await helm('get', 'values', 'demo', '-n', ns, '-o', 'json')), {
      greeting: 'two',
      replicas: 3,
    });
    assert.deepEqual(
      JSON.parse(await helm('get', 'values', 'demo', '-n', ns, '--revision', '1', '-o', 'json')),
      { greeting: 'one' },
    );
    const manifest = await helm('get', 'manifest', 'demo', '-n', ns);
    assert.equal(manifest, `${v2.manifest}\n`);
    assert.match(manifest, /greeting: "two"\n {2}revision: "2"/);
    const hooks = await helm('get', 'hooks', 'demo', '-n', ns);
    assert.equal(hooks, (v2.hooks ?? []).map((h) => `---\n# Source: ${h.path}\n${h.manifest}\n`).join(''));

    // The Secrets carry Helm's labels; an update replaced createdAt with modifiedAt, as Helm's does.
    const secrets = await client.list('v1', 'Secret', { namespace: ns, labelSelector: 'owner=helm' });
    const labels = Object.fromEntries(secrets.items.map((s) => [s.metadata.name, s.metadata.labels ?? {}]));
    for (const [name, status, version] of [
      ['sh.helm.release.v1.demo.v1', 'superseded', '1'],
      ['sh.helm.release.v1.demo.v2', 'deployed', '2'],
    ] as const) {
      const { modifiedAt, ...rest } = labels[name] ?? {};
      assert.match(modifiedAt ?? '', /^[0-9]{10}$/);
      assert.deepEqual(rest, { name: 'demo', owner: 'helm', status, version });
    }

    // A second writer of the same revision is told so, and nothing it held is lost.
    await assert.rejects(store.create(v2), ReleaseExistsError);
    assert.deepEqual(
      (await store.history('demo')).map((r) => [r.version, r.info.status]),
      [
        [1, 'superseded'],
        [2, 'deployed'],
      ],
    );

    // Max history as Helm applies it before a new revision: the oldest go, the deployed one stays.
    const v3 = await revision(ns, 3, { greeting: 'three' }, 'pending-upgrade', v1.info.first_deployed);
    await store.create(v3);
    v3.info.status = 'failed';
    v3.info.description = 'Upgrade "demo" failed: a test failure';
    await store.update(v3);
    assert.deepEqual(await store.prune('demo', 2), [1, 3]);
    assert.deepEqual(
      (await store.history('demo')).map((r) => r.version),
      [2],
    );
    assert.deepEqual(await store.prune('demo', 0), []);
    assert.equal(await store.remove('demo', 3), false);
    const after = JSON.parse(await helm('history', 'demo', '-n', ns, '-o', 'json')) as HelmHistoryEntry[];
    assert.deepEqual(
      after.map((h) => [h.revision, h.status]),
      [[2, 'deployed']],
    );
  });

  it('reads a release helm install made, and helm upgrade and rollback accept the revision Mooring adds', async (t) => {
    const { ns, as } = await namespaceWithWriter(t, 'release-store-adopt');
    await helm('install', 'demo', chartDir, '-n', ns, '--set', 'greeting=from-helm');
    const store = new ReleaseStore(client, { namespace: ns, impersonate: as });

    // What adoption needs: the deployed revision, its values, chart, manifest and hooks.
    const [v1, ...rest] = await store.history('demo');
    assert.ok(v1);
    assert.equal(rest.length, 0);
    assert.deepEqual(await store.lastDeployed('demo'), v1);
    assert.equal(v1.info.status, 'deployed');
    assert.deepEqual(v1.config, { greeting: 'from-helm' });
    assert.deepEqual(v1.chart, chartRecordOf(chartDir));
    const rendered = splitRender(
      await renderChart({
        chartDir,
        releaseName: 'demo',
        namespace: ns,
        set: ['greeting=from-helm'],
        limits,
        pool,
      }),
    );
    assert.equal(v1.manifest, rendered.manifest);
    assert.deepEqual(
      (v1.hooks ?? []).filter((h) => h.last_run.phase === 'Succeeded').map((h) => h.name),
      ['demo-post-install', 'demo-pre-install-b', 'demo-pre-install-a', 'demo-pre-install-first'],
    );

    // Mooring upgrades it to revision 2.
    const v2 = await revision(ns, 2, { greeting: 'from-mooring' }, 'pending-upgrade', v1.info.first_deployed);
    await store.create(v2);
    await applyManifest(ns, v2.manifest ?? '');
    await deploy(store, v2, v1);

    // helm builds on Mooring's record: --reuse-values reads its config, and the new revision is 3.
    await helm('upgrade', 'demo', chartDir, '-n', ns, '--reuse-values', '--set', 'replicas=2');
    assert.deepEqual(JSON.parse(await helm('get', 'values', 'demo', '-n', ns, '-o', 'json')), {
      greeting: 'from-mooring',
      replicas: 2,
    });
    // Rollback to Mooring's revision takes its chart, values and manifest from Mooring's record.
    await helm('rollback', 'demo', '2', '-n', ns);
    const history = JSON.parse(await helm('history', 'demo', '-n', ns, '-o', 'json')) as HelmHistoryEntry[];
    assert.deepEqual(
      history.map((h) => [h.revision, h.status]),
      [
        [1, 'superseded'],
        [2, 'superseded'],
        [3, 'superseded'],
        [4, 'deployed'],
      ],
    );
    const v4 = await store.lastDeployed('demo');
    assert.equal(v4?.version, 4);
    assert.equal(v4?.manifest, v2.manifest);
    assert.deepEqual(v4?.config, v2.config);
    assert.equal(v4?.info.description, 'Rollback to 2');
    const cm = await client.get<{
      apiVersion: string;
      kind: string;
      metadata: { name: string };
      data: Record<string, string>;
    }>({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      namespace: ns,
      name: 'demo-config',
    });
    assert.equal(cm.data.greeting, 'from-mooring');
  });

  it("writes and reads only as the HelmRelease's service account, and says which record it could not touch", async (t) => {
    const ns = await testNamespace(t, 'release-store-forbidden');
    const store = new ReleaseStore(client, {
      namespace: ns,
      impersonate: { user: `system:serviceaccount:${ns}:nobody` },
    });
    const record: ReleaseRecord = {
      name: 'demo',
      version: 1,
      info: { deleted: '', status: 'pending-install' },
      config: { password: 'hunter2' },
    };
    await assert.rejects(store.create(record), (err: unknown) => {
      assert.ok(err instanceof ReleaseRecordError, String(err));
      assert.match(
        err.message,
        new RegExp(`cannot create release record ${ns}/sh\\.helm\\.release\\.v1\\.demo\\.v1: 403 Forbidden`),
      );
      assert.doesNotMatch(err.message, /hunter2/);
      return true;
    });
    await assert.rejects(
      store.history('demo'),
      (err: unknown) => err instanceof ApiError && err.statusCode === 403,
    );
  });

  it('a tenant-written Secret that is not a release fails the read and names itself', async (t) => {
    const { ns, as } = await namespaceWithWriter(t, 'release-store-garbage');
    await client.create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: 'sh.helm.release.v1.demo.v1',
        namespace: ns,
        labels: { owner: 'helm', name: 'demo' },
      },
      type: 'helm.sh/release.v1',
      data: { release: Buffer.from('not-a-release').toString('base64') },
    });
    const store = new ReleaseStore(client, { namespace: ns, impersonate: as });
    await assert.rejects(store.history('demo'), (err: unknown) => {
      assert.ok(err instanceof ReleaseRecordError);
      assert.match(err.message, new RegExp(`Secret ${ns}/sh\\.helm\\.release\\.v1\\.demo\\.v1`));
      return true;
    });
    await assert.rejects(store.history('bad name!'), /is not a valid label value/);
  });
});
