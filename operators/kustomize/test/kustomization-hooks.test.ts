// Apply waves and hooks inside one Kustomization (issue #23 §1), end to end on the control plane
// with workloads: the source and kustomize operators in this process, a real Git server, Jobs run
// by kube-controller-manager and Deployments rolled out on kwok's fake nodes.
//
// How a Job ends here without a kubelet (as in helm-hooks.test.ts): kwok's `pod-complete` stage
// (bin/kwok-stages.yaml) marks a running Pod that a Job owns Succeeded, so a plain Job completes; a
// Job whose Pod can never be scheduled (a nodeSelector no fake node has) with activeDeadlineSeconds
// is failed by the Job controller (DeadlineExceeded). Order is read from the cluster's own
// timestamps, never from how long anything took.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { KUSTOMIZE_API_VERSION, SOURCE_API_VERSION } from '@mooring/api';
import type { KubeObject, MooringObject } from '@mooring/runtime';
import { sourceOperator } from '@mooring/source-operator';
import { eventually, startInProcessOperators, uniqueName } from '@mooring/test/harness';
import { stringify } from 'yaml';
import { kustomizeOperator } from '../src/kustomize-operator.ts';
import {
  chartRepo,
  condition,
  type HelmStack,
  requestReconcile,
  startHelmStack,
} from './helm-release-fixture.ts';

let stack: HelmStack;
before(async () => {
  stack = await startHelmStack('ks-hooks');
});
after(() => stack?.stop());

interface KustomizationObject extends MooringObject {
  status?: MooringObject['status'] & {
    lastAppliedRevision?: string;
    inventory?: { entries: { id: string; v: string }[] };
    hooks?: {
      revision: string;
      digest: string;
      preApply?: { result: string; message?: string };
      postApply?: { result: string; message?: string };
      onFailure?: { result: string; message?: string };
      objects?: { entries: { id: string; v: string }[] };
    };
  };
}

type Ending = 'completes' | 'fails';

function job(name: string, annotations: Record<string, string>, ending: Ending = 'completes'): KubeObject {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name, annotations },
    spec: {
      backoffLimit: 0,
      ...(ending === 'fails' ? { activeDeadlineSeconds: 1 } : {}),
      template: {
        spec: {
          restartPolicy: 'Never',
          ...(ending === 'fails' ? { nodeSelector: { 'mooring.dev/no-such-node': 'true' } } : {}),
          containers: [{ name: 'job', image: 'registry.invalid/migrate:1' }],
        },
      },
    },
  };
}

function deployment(name: string, annotations: Record<string, string> = {}, env = 'v1'): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, annotations },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: {
          containers: [{ name: 'app', image: 'registry.invalid/app:1', env: [{ name: 'V', value: env }] }],
        },
      },
    },
  };
}

const configMap = (
  name: string,
  data: Record<string, string>,
  annotations: Record<string, string> = {},
): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, annotations },
  data,
});

/** One file per object under `dir`, with a kustomization.yaml listing them. */
function files(dir: string, objects: KubeObject[]): Record<string, string | null> {
  const out: Record<string, string | null> = {};
  for (const o of objects) out[`${dir}/${o.metadata.name}-${o.kind.toLowerCase()}.yaml`] = stringify(o);
  out[`${dir}/kustomization.yaml`] = stringify({
    apiVersion: 'kustomize.config.k8s.io/v1beta1',
    kind: 'Kustomization',
    resources: objects.map((o) => `${o.metadata.name}-${o.kind.toLowerCase()}.yaml`),
  });
  return out;
}

const ksKey = (name: string, namespace = stack.namespace) => ({
  apiVersion: KUSTOMIZE_API_VERSION,
  kind: 'Kustomization',
  namespace,
  name,
});

async function createKustomization(
  name: string,
  source: string,
  path: string,
  spec: Record<string, unknown> = {},
  namespace = stack.namespace,
) {
  await stack.client.create({
    apiVersion: KUSTOMIZE_API_VERSION,
    kind: 'Kustomization',
    metadata: { name, namespace },
    spec: {
      interval: '10m',
      prune: true,
      wait: true,
      timeout: '2m',
      sourceRef: { kind: 'GitRepository', name: source },
      path,
      ...spec,
    },
  } as KubeObject);
}

async function waitForKustomization(
  name: string,
  status: 'True' | 'False',
  when: (k: KustomizationObject) => boolean = () => true,
  timeoutMs = 60_000,
  namespace = stack.namespace,
): Promise<KustomizationObject> {
  let last: KustomizationObject | undefined;
  try {
    return await eventually(
      `Kustomization ${name} Ready=${status}`,
      async () => {
        last = await stack.client.get<KustomizationObject>(ksKey(name, namespace));
        const ready = condition(last, 'Ready');
        return ready?.status === status && ready.observedGeneration === last.metadata.generation && when(last)
          ? last
          : undefined;
      },
      timeoutMs,
    );
  } catch (err) {
    throw new Error(`${(err as Error).message}; last status: ${JSON.stringify(last?.status)}`);
  }
}

const live = (apiVersion: string, kind: string, name: string, namespace = stack.namespace) =>
  stack.client.getOrUndefined<KubeObject & { status?: Record<string, unknown> }>({
    apiVersion,
    kind,
    namespace,
    name,
  });
const liveJob = (name: string, namespace = stack.namespace) => live('batch/v1', 'Job', name, namespace);
const liveDeployment = (name: string) => live('apps/v1', 'Deployment', name);
const liveConfigMap = (name: string) => live('v1', 'ConfigMap', name);

const created = (o: KubeObject | undefined) => Date.parse(String(o?.metadata.creationTimestamp));
const conditionTime = (o: { status?: Record<string, unknown> } | undefined, type: string) => {
  const conditions = (o?.status?.conditions ?? []) as {
    type: string;
    status: string;
    lastTransitionTime?: string;
  }[];
  const c = conditions.find((x) => x.type === type && x.status === 'True');
  return Date.parse(String(c?.lastTransitionTime));
};

async function newRevision(name: string, repoRevision: (k: KustomizationObject) => boolean) {
  return waitForKustomization(name, 'True', repoRevision);
}

describe('Kustomization waves and hooks on the cluster', { concurrency: 3 }, () => {
  test('a pre-apply migration Job completes before the Deployment exists; run once per revision, not per reconcile', async () => {
    const { repo, name: source } = await chartRepo(stack);
    const migrate = uniqueName('migrate');
    const app = uniqueName('app');
    const hook = { 'mooring.dev/hook': 'pre-apply' };
    await repo.commit(files('app', [job(migrate, hook), deployment(app)]));
    // chartRepo's GitRepository may have fetched before this commit; its interval is 10m.
    await requestReconcile(stack, 'source.mooring.dev/v1', 'GitRepository', source);
    const ks = uniqueName('ks');
    await createKustomization(ks, source, 'app');
    const ready = await waitForKustomization(ks, 'True');
    const rev1 = ready.status?.lastAppliedRevision;

    const migration = await liveJob(migrate);
    const deploy = await liveDeployment(app);
    assert.ok(migration && deploy, 'both exist');
    const completed = Date.parse(String(migration.status?.completionTime));
    assert.ok(
      created(deploy) >= completed,
      `Deployment created ${deploy.metadata.creationTimestamp}, Job completed ${migration.status?.completionTime}`,
    );
    const inventory = (ready.status?.inventory?.entries ?? []).map((e) => e.id);
    assert.ok(
      inventory.some((id) => id.endsWith(`_${app}_apps_Deployment`)),
      inventory.join(),
    );
    assert.ok(
      !inventory.some((id) => id.includes(migrate)),
      `the hook is not a regular object: ${inventory.join()}`,
    );
    assert.equal(ready.status?.hooks?.revision, rev1);
    assert.deepEqual(ready.status?.hooks?.preApply, { result: 'Succeeded' });
    assert.ok(ready.status?.hooks?.objects?.entries.some((e) => e.id.includes(migrate)));

    // A plain re-reconcile of the same revision leaves the Job as it is.
    const token = `${Date.now()}`;
    await stack.client.mergePatch(ksKey(ks), {
      metadata: { annotations: { 'reconcile.mooring.dev/requestedAt': token } },
    });
    await waitForKustomization(ks, 'True', (k) => k.status?.lastHandledReconcileAt === token);
    assert.equal((await liveJob(migrate))?.metadata.uid, migration.metadata.uid, 'not run again');

    // A new revision runs it again (before-hook-creation replaced the old Job), then rolls out.
    await repo.commit(files('app', [job(migrate, hook), deployment(app, {}, 'v2')]));
    await requestReconcile(stack, 'source.mooring.dev/v1', 'GitRepository', source);
    const second = await newRevision(ks, (k) => k.status?.lastAppliedRevision !== rev1);
    const rerun = await liveJob(migrate);
    assert.notEqual(rerun?.metadata.uid, migration.metadata.uid, 'a new Job for the new revision');
    assert.equal(second.status?.hooks?.revision, second.status?.lastAppliedRevision);

    // A revision without the hook deletes its Job (prune is on); the Deployment stays.
    await repo.commit({ ...files('app', [deployment(app, {}, 'v2')]), [`app/${migrate}-job.yaml`]: null });
    await requestReconcile(stack, 'source.mooring.dev/v1', 'GitRepository', source);
    const third = await newRevision(
      ks,
      (k) => k.status?.lastAppliedRevision !== second.status?.lastAppliedRevision,
    );
    await eventually('the removed hook Job is deleted', async () => (await liveJob(migrate)) === undefined);
    assert.ok(await liveDeployment(app));
    assert.equal(third.status?.hooks, undefined, 'no hooks left to remember');
  });

  test('a failing pre-apply hook stops the revision: nothing more applied, the last good revision stays, on-failure runs', async () => {
    const { repo, name: source } = await chartRepo(stack);
    const settings = uniqueName('settings');
    const added = uniqueName('added');
    const notify = uniqueName('notify');
    const migrate = uniqueName('migrate');
    await repo.commit(files('app', [configMap(settings, { level: 'v1' })]));
    // chartRepo's GitRepository may have fetched before this commit; its interval is 10m.
    await requestReconcile(stack, 'source.mooring.dev/v1', 'GitRepository', source);
    const ks = uniqueName('ks');
    await createKustomization(ks, source, 'app');
    const good = await waitForKustomization(ks, 'True');

    await repo.commit(
      files('app', [
        job(migrate, { 'mooring.dev/hook': 'pre-apply' }, 'fails'),
        configMap(settings, { level: 'v2' }),
        configMap(added, { a: '1' }),
        configMap(notify, { failed: 'true' }, { 'argocd.argoproj.io/hook': 'SyncFail' }),
      ]),
    );
    await requestReconcile(stack, 'source.mooring.dev/v1', 'GitRepository', source);
    const failed = await waitForKustomization(
      ks,
      'False',
      (k) => condition(k, 'Ready')?.reason === 'HookFailed',
    );
    const message = condition(failed, 'Ready')!.message;
    assert.match(
      message,
      new RegExp(`pre-apply hook Job/${stack.namespace}/${migrate} failed: DeadlineExceeded`),
    );
    assert.equal(failed.status?.lastAppliedRevision, good.status?.lastAppliedRevision);
    const kept = (await liveConfigMap(settings)) as { data?: Record<string, string> } | undefined;
    assert.equal(kept?.data?.level, 'v1', 'the last good revision stays');
    assert.equal(await liveConfigMap(added), undefined, 'nothing of the revision applied');
    assert.equal(failed.status?.hooks?.preApply?.result, 'Failed');
    // Argo CD's SyncFail is Mooring's on-failure: it ran, once.
    assert.ok(await liveConfigMap(notify), 'the on-failure hook ran');
    assert.deepEqual(failed.status?.hooks?.onFailure, { result: 'Succeeded' });
    const events = await stack.client.request<{
      items: { reason: string; message: string; involvedObject: { name: string } }[];
    }>({
      method: 'GET',
      path: `/api/v1/namespaces/${stack.namespace}/events`,
    });
    assert.ok(
      events.items.some(
        (e) =>
          e.involvedObject.name === ks && e.reason === 'HookFailed' && /DeadlineExceeded/.test(e.message),
      ),
      JSON.stringify(
        events.items.filter((e) => e.involvedObject.name === ks).map((e) => [e.reason, e.message]),
      ),
    );
  });

  test('post-apply hooks run after the revision is healthy; hook-succeeded deletes a Job once it completed', async () => {
    const { repo, name: source } = await chartRepo(stack);
    const app = uniqueName('app');
    const smoke = uniqueName('smoke');
    const marker = uniqueName('marker');
    await repo.commit(
      files('app', [
        deployment(app),
        job(smoke, { 'mooring.dev/hook': 'post-apply', 'mooring.dev/hook-delete-policy': 'hook-succeeded' }),
        configMap(marker, { done: 'true' }, { 'argocd.argoproj.io/hook': 'PostSync' }),
      ]),
    );
    // chartRepo's GitRepository may have fetched before this commit; its interval is 10m.
    await requestReconcile(stack, 'source.mooring.dev/v1', 'GitRepository', source);
    const ks = uniqueName('ks');
    await createKustomization(ks, source, 'app');
    const ready = await waitForKustomization(ks, 'True');
    assert.deepEqual(ready.status?.hooks?.postApply, { result: 'Succeeded' });
    assert.equal(await liveJob(smoke), undefined, 'hook-succeeded deleted the completed Job');
    const deploy = await liveDeployment(app);
    const markerLive = await liveConfigMap(marker);
    assert.ok(
      created(markerLive) >= conditionTime(deploy, 'Available'),
      `post-apply ConfigMap created ${markerLive?.metadata.creationTimestamp}, Deployment available ${conditionTime(deploy, 'Available')}`,
    );
    const inventory = (ready.status?.inventory?.entries ?? []).map((e) => e.id);
    assert.ok(!inventory.some((id) => id.includes(marker) || id.includes(smoke)), inventory.join());

    // Deleting the Kustomization (prune on) deletes the hook objects it left, beside its inventory.
    await stack.client.delete(ksKey(ks));
    await eventually(
      'the Kustomization is gone',
      async () => (await stack.client.getOrUndefined(ksKey(ks))) === undefined,
      60_000,
    );
    assert.equal(await liveConfigMap(marker), undefined, 'the post-apply hook object went with it');
    assert.equal(await liveDeployment(app), undefined);
  });

  test('a restarted kustomize operator does not run the hooks of a revision again', async (t) => {
    // A namespace of its own, so the kustomize operator can be stopped and started while the
    // source operator serving its artifact keeps running.
    const namespace = uniqueName('ks-restart');
    await stack.client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
    const storage = await mkdtemp(join(tmpdir(), 'mooring-storage-'));
    const sources = await startInProcessOperators(
      [sourceOperator()],
      namespace,
      ['--storage-path', storage, '--storage-addr', '127.0.0.1:0'],
      { kubeconfig: stack.kubeconfig },
    );
    const startKustomize = () =>
      startInProcessOperators([kustomizeOperator()], namespace, [], { kubeconfig: stack.kubeconfig });
    let appliers = await startKustomize();
    t.after(async () => {
      await appliers.stop();
      await sources.stop();
      await rm(storage, { recursive: true, force: true, maxRetries: 5 });
      await stack.client.delete({ apiVersion: 'v1', kind: 'Namespace', name: namespace }).catch(() => {});
    });
    const source = uniqueName('repo');
    const repo = await stack.git.createRepo(source);
    const migrate = uniqueName('migrate');
    await repo.commit(
      files('app', [job(migrate, { 'mooring.dev/hook': 'pre-apply' }), configMap('settings', { a: '1' })]),
    );
    await stack.client.create({
      apiVersion: SOURCE_API_VERSION,
      kind: 'GitRepository',
      metadata: { name: source, namespace },
      spec: { url: repo.url, interval: '10m', ref: { branch: 'main' } },
    } as KubeObject);
    const ks = uniqueName('ks');
    await createKustomization(ks, source, 'app', {}, namespace);
    await waitForKustomization(ks, 'True', () => true, 60_000, namespace);
    const first = await liveJob(migrate, namespace);
    assert.ok(first);

    await appliers.stop();
    appliers = await startKustomize();
    const token = `${Date.now()}-restart`;
    await stack.client.mergePatch(ksKey(ks, namespace), {
      metadata: { annotations: { 'reconcile.mooring.dev/requestedAt': token } },
    });
    await waitForKustomization(
      ks,
      'True',
      (k) => k.status?.lastHandledReconcileAt === token,
      60_000,
      namespace,
    );
    assert.equal(
      (await liveJob(migrate, namespace))?.metadata.uid,
      first.metadata.uid,
      'the new process did not run it again',
    );
  });

  test('a hook still running at spec.timeout is HookFailed naming it, waited on again rather than re-created, and replaced by a fix', async () => {
    const { repo, name: source } = await chartRepo(stack);
    const migrate = uniqueName('migrate');
    const settings = uniqueName('settings');
    const stuck = job(migrate, { 'mooring.dev/hook': 'pre-apply' });
    (stuck.spec as { template: { spec: Record<string, unknown> } }).template.spec.nodeSelector = {
      'mooring.dev/no-such-node': 'true',
    };
    await repo.commit(files('app', [stuck, configMap(settings, { a: '1' })]));
    // chartRepo's GitRepository may have fetched before this commit; its interval is 10m.
    await requestReconcile(stack, 'source.mooring.dev/v1', 'GitRepository', source);
    const ks = uniqueName('ks');
    await createKustomization(ks, source, 'app', { timeout: '10s' });
    const timedOut = await waitForKustomization(
      ks,
      'False',
      (k) => condition(k, 'Ready')?.reason === 'HookFailed',
      120_000,
    );
    assert.match(
      condition(timedOut, 'Ready')!.message,
      new RegExp(`pre-apply hook Job/${stack.namespace}/${migrate} did not complete within spec.timeout`),
    );
    assert.equal(await liveConfigMap(settings), undefined, 'nothing applied while the hook runs');
    const first = await liveJob(migrate);
    const token = `${Date.now()}-again`;
    await stack.client.mergePatch(ksKey(ks), {
      metadata: { annotations: { 'reconcile.mooring.dev/requestedAt': token } },
    });
    await waitForKustomization(ks, 'False', (k) => k.status?.lastHandledReconcileAt === token, 120_000);
    assert.equal(
      (await liveJob(migrate))?.metadata.uid,
      first?.metadata.uid,
      'the same Job, waited on again',
    );

    await repo.commit(
      files('app', [job(migrate, { 'mooring.dev/hook': 'pre-apply' }), configMap(settings, { a: '1' })]),
    );
    await requestReconcile(stack, 'source.mooring.dev/v1', 'GitRepository', source);
    await waitForKustomization(ks, 'True', () => true, 120_000);
    assert.notEqual((await liveJob(migrate))?.metadata.uid, first?.metadata.uid, 'the fix replaced it');
    assert.ok(await liveConfigMap(settings));
  });

  test('waves apply in order: with wait, a wave is healthy before the next is applied, and an unhealthy one holds the rest', async () => {
    const { repo, name: source } = await chartRepo(stack);
    const db = uniqueName('db');
    const app = uniqueName('app');
    const late = uniqueName('late');
    const wave = (n: number) => ({ 'mooring.dev/apply-wave': String(n) });
    const stuck = deployment(db, wave(-1));
    (stuck.spec as { template: { spec: Record<string, unknown> } }).template.spec.nodeSelector = {
      'mooring.dev/no-such-node': 'true',
    };
    await repo.commit(
      files('app', [
        configMap(late, { a: '1' }, { 'argocd.argoproj.io/sync-wave': '5' }),
        deployment(app),
        stuck,
      ]),
    );
    // chartRepo's GitRepository may have fetched before this commit; its interval is 10m.
    await requestReconcile(stack, 'source.mooring.dev/v1', 'GitRepository', source);
    const ks = uniqueName('ks');
    await createKustomization(ks, source, 'app', { timeout: '15s' });
    const held = await waitForKustomization(
      ks,
      'False',
      (k) => condition(k, 'Ready')?.reason === 'HealthCheckFailed',
      120_000,
    );
    assert.match(
      condition(held, 'Ready')!.message,
      /wave -1 of revision .* is not healthy, so the waves after it were not applied/,
    );
    assert.ok(await liveDeployment(db));
    assert.equal(await liveDeployment(app), undefined, 'wave 0 waits for wave -1');
    assert.equal(await liveConfigMap(late), undefined, 'wave 5 waits too');

    await repo.commit(
      files('app', [
        configMap(late, { a: '1' }, { 'argocd.argoproj.io/sync-wave': '5' }),
        deployment(app),
        deployment(db, wave(-1)),
      ]),
    );
    await requestReconcile(stack, 'source.mooring.dev/v1', 'GitRepository', source);
    await waitForKustomization(ks, 'True', () => true, 120_000);
    const dbLive = await liveDeployment(db);
    const appLive = await liveDeployment(app);
    const lateLive = await liveConfigMap(late);
    const dbAvailable = conditionTime(dbLive, 'Available');
    const appAvailable = conditionTime(appLive, 'Available');
    assert.ok(
      created(appLive) >= dbAvailable,
      `app created ${appLive?.metadata.creationTimestamp}, db available ${dbAvailable}`,
    );
    assert.ok(
      created(lateLive) >= appAvailable,
      `late created ${lateLive?.metadata.creationTimestamp}, app available ${appAvailable}`,
    );
  });

  test('an invalid wave or hook annotation fails the revision with its name, and nothing is applied', async () => {
    const { repo, name: source } = await chartRepo(stack);
    const fine = uniqueName('fine');
    await repo.commit(
      files('app', [
        configMap(fine, { a: '1' }),
        configMap('bad', { a: '1' }, { 'mooring.dev/apply-wave': 'early' }),
      ]),
    );
    // chartRepo's GitRepository may have fetched before this commit; its interval is 10m.
    await requestReconcile(stack, 'source.mooring.dev/v1', 'GitRepository', source);
    const ks = uniqueName('ks');
    await createKustomization(ks, source, 'app');
    const failed = await waitForKustomization(
      ks,
      'False',
      (k) => condition(k, 'Ready')?.reason === 'InvalidHookOrWave',
    );
    assert.match(
      condition(failed, 'Ready')!.message,
      /ConfigMap\/bad: mooring\.dev\/apply-wave: 'early' is not an integer/,
    );
    assert.equal(await liveConfigMap(fine), undefined);
  });
});
