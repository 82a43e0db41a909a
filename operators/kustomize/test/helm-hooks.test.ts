// Helm hooks and `helm test` run on the real control plane with workloads (kube-controller-manager
// runs the Jobs, kwok's fake nodes their Pods): order by weight, a failure stopping the run, the
// three delete policies, kinds without a completion, RBAC refusals as the release's service
// account, timeouts and cancellation. Hooks are built as the reconciler builds them: a rendered
// stream in Helm's format through splitRender.
//
// How a Job ends here, without a kubelet: kwok's `pod-complete` stage (bin/kwok-stages.yaml) marks
// a running Pod that a Job owns Succeeded, so a plain Job completes. A Job whose Pods can never be
// scheduled (a nodeSelector no fake node has) never completes; with activeDeadlineSeconds the Job
// controller fails it (DeadlineExceeded), and without one it runs until the hook's timeout.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { type HookRecord, splitRender } from '@mooring/helm';
import { ApiError, type KubeClient, type KubeObject } from '@mooring/runtime';
import { eventually, testCluster, testNamespace } from '@mooring/test/harness';
import { stringify } from 'yaml';
import { type HookRunOptions, runHooks, runTests } from '../src/helm-release/hooks.ts';

let client: KubeClient;
before(async () => {
  ({ client } = await testCluster({ workloads: true }));
});

type Ending = 'completes' | 'fails' | 'never';

interface HookSpec {
  event?: string;
  weight?: number;
  deletePolicy?: string;
}

function hookAnnotations(spec: HookSpec): Record<string, string> {
  const a: Record<string, string> = { 'helm.sh/hook': spec.event ?? 'pre-install' };
  if (spec.weight !== undefined) a['helm.sh/hook-weight'] = String(spec.weight);
  if (spec.deletePolicy) a['helm.sh/hook-delete-policy'] = spec.deletePolicy;
  return a;
}

function job(name: string, ending: Ending, spec: HookSpec = {}): KubeObject {
  const unschedulable = ending !== 'completes';
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name, annotations: hookAnnotations(spec) },
    spec: {
      backoffLimit: 0,
      ...(ending === 'fails' ? { activeDeadlineSeconds: 1 } : {}),
      template: {
        spec: {
          restartPolicy: 'Never',
          ...(unschedulable ? { nodeSelector: { 'mooring.dev/no-such-node': 'true' } } : {}),
          containers: [{ name: 'hook', image: 'registry.invalid/hook:1' }],
        },
      },
    },
  };
}

function configMap(name: string, data: Record<string, string>, spec: HookSpec = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, annotations: hookAnnotations(spec) },
    data,
  };
}

/** The hooks of a chart whose templates are `objects`, as splitRender reads Helm's output. */
function hooksOf(...objects: KubeObject[]): HookRecord[] {
  const stream = objects
    .map((o) => `---\n# Source: hooks/templates/${o.metadata.name}.yaml\n${stringify(o)}`)
    .join('');
  return splitRender(stream).hooks;
}

function options(namespace: string, over: Partial<HookRunOptions> = {}): HookRunOptions {
  return {
    client,
    namespace,
    timeoutMs: 120_000,
    signal: new AbortController().signal,
    labels: { 'helm.mooring.dev/name': 'hooks' },
    annotations: { 'meta.helm.sh/release-name': 'hooks' },
    ...over,
  };
}

async function live(apiVersion: string, kind: string, namespace: string, name: string) {
  return client.getOrUndefined<KubeObject & { status?: Record<string, unknown> }>({
    apiVersion,
    kind,
    namespace,
    name,
  });
}
const liveJob = (ns: string, name: string) => live('batch/v1', 'Job', ns, name);
const liveConfigMap = (ns: string, name: string) => live('v1', 'ConfigMap', ns, name);

const DEADLINE = /DeadlineExceeded: Job was active longer than specified deadline/;

describe('Helm hooks on the cluster', () => {
  test('pre-install Jobs run in weight order, each after the one before completed', async (t) => {
    const ns = await testNamespace(t, 'hooks-order', { workloads: true });
    // By name "migrate" would come first; weight -1 puts "schema" before it.
    const hooks = hooksOf(
      job('migrate', 'completes', { weight: 5 }),
      job('schema', 'completes', { weight: -1 }),
    );
    const result = await runHooks(hooks, 'pre-install', options(ns));
    assert.ok(result.ok, JSON.stringify(result));
    assert.deepEqual(
      result.ran.map((o) => [o.name, o.kind, o.phase]),
      [
        ['schema', 'Job', 'Succeeded'],
        ['migrate', 'Job', 'Succeeded'],
      ],
    );
    // The default policy (before-hook-creation) leaves both Jobs in place: the cluster's own record
    // says the second was created no earlier than the first completed.
    const schema = await liveJob(ns, 'schema');
    const migrate = await liveJob(ns, 'migrate');
    const completed = Date.parse(String(schema?.status?.completionTime));
    const created = Date.parse(String(migrate?.metadata.creationTimestamp));
    assert.ok(created >= completed, `migrate created ${created}, schema completed ${completed}`);
    assert.ok(Date.parse(result.ran[1]!.startedAt) >= Date.parse(result.ran[0]!.completedAt));
    assert.equal(migrate?.metadata.labels?.['helm.mooring.dev/name'], 'hooks');
    assert.equal(migrate?.metadata.annotations?.['meta.helm.sh/release-name'], 'hooks');
  });

  test('a failing hook stops the run: the later hook never appears, and the failed Job stays', async (t) => {
    const ns = await testNamespace(t, 'hooks-fail', { workloads: true });
    const hooks = hooksOf(
      configMap('earlier', { a: '1' }, { weight: -1, deletePolicy: 'hook-succeeded' }),
      job('fails', 'fails', { weight: 0 }),
      configMap('later', { a: '1' }, { weight: 1 }),
    );
    const result = await runHooks(hooks, 'pre-install', options(ns));
    assert.ok(!result.ok);
    assert.equal(result.failed.name, 'fails');
    assert.equal(result.failed.kind, 'Job');
    assert.match(
      result.failed.message,
      /^pre-install hook Job\/.+\/fails \(hooks\/templates\/fails\.yaml\) failed: /,
    );
    assert.match(result.failed.message, DEADLINE);
    assert.deepEqual(
      result.ran.map((o) => [o.name, o.phase]),
      [
        ['earlier', 'Succeeded'],
        ['fails', 'Failed'],
      ],
    );
    assert.equal(await liveConfigMap(ns, 'later'), undefined, 'the hook after the failed one was created');
    // As in Helm, the hooks that succeeded before the failure still go by hook-succeeded.
    assert.equal(await liveConfigMap(ns, 'earlier'), undefined);
    // No hook-failed policy: the Job is left for debugging.
    assert.ok(await liveJob(ns, 'fails'));
  });

  test('hook-failed deletes the failed Job', async (t) => {
    const ns = await testNamespace(t, 'hooks-hookfailed', { workloads: true });
    const hooks = hooksOf(job('fails', 'fails', { event: 'pre-upgrade', deletePolicy: 'hook-failed' }));
    const result = await runHooks(hooks, 'pre-upgrade', options(ns));
    assert.ok(!result.ok);
    assert.match(result.failed.message, DEADLINE);
    assert.equal(await liveJob(ns, 'fails'), undefined);
  });

  test('hook-succeeded leaves nothing behind after success', async (t) => {
    const ns = await testNamespace(t, 'hooks-succeeded', { workloads: true });
    const hooks = hooksOf(
      job('cleanup', 'completes', { event: 'post-install', deletePolicy: 'hook-succeeded' }),
      configMap('marker', { a: '1' }, { event: 'post-install', weight: 2, deletePolicy: 'hook-succeeded' }),
    );
    const result = await runHooks(hooks, 'post-install', options(ns));
    assert.ok(result.ok, JSON.stringify(result));
    assert.equal(result.ran.length, 2);
    assert.equal(await liveJob(ns, 'cleanup'), undefined);
    assert.equal(await liveConfigMap(ns, 'marker'), undefined);
  });

  test('before-hook-creation replaces a leftover hook object from an earlier run', async (t) => {
    const ns = await testNamespace(t, 'hooks-replace', { workloads: true });
    const old: KubeObject = await client.create<KubeObject>({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'settings', namespace: ns },
      data: { run: 'earlier' },
    });
    // No policy named: before-hook-creation is Helm's default.
    const result = await runHooks(
      hooksOf(configMap('settings', { run: 'this' })),
      'pre-install',
      options(ns),
    );
    assert.ok(result.ok, JSON.stringify(result));
    const now = await liveConfigMap(ns, 'settings');
    assert.deepEqual(now?.data, { run: 'this' });
    assert.notEqual(now?.metadata.uid, old.metadata.uid, 'the old object was updated, not replaced');
  });

  test('without before-hook-creation a leftover object fails the hook, as in Helm', async (t) => {
    const ns = await testNamespace(t, 'hooks-exists', { workloads: true });
    await client.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'settings', namespace: ns },
    });
    const hooks = hooksOf(configMap('settings', { run: 'this' }, { deletePolicy: 'hook-succeeded' }));
    const result = await runHooks(hooks, 'pre-install', options(ns));
    assert.ok(!result.ok);
    assert.match(result.failed.message, /could not create it: configmaps "settings" already exists/);
  });

  test('a ConfigMap hook counts as done as soon as it exists', async (t) => {
    const ns = await testNamespace(t, 'hooks-configmap', { workloads: true });
    const result = await runHooks(hooksOf(configMap('seed', { a: '1' })), 'pre-install', options(ns));
    assert.ok(result.ok, JSON.stringify(result));
    assert.deepEqual(
      result.ran.map((o) => [o.name, o.kind, o.phase]),
      [['seed', 'ConfigMap', 'Succeeded']],
    );
    assert.deepEqual((await liveConfigMap(ns, 'seed'))?.data, { a: '1' });
  });

  test('a Pod hook waits for its phase, and a Failed Pod fails it with the exit code (the test stands in for the kubelet kwok lacks)', async (t) => {
    const ns = await testNamespace(t, 'hooks-pod', { workloads: true });
    const pod: KubeObject = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'probe', annotations: hookAnnotations({ event: 'post-install' }) },
      spec: { restartPolicy: 'Never', containers: [{ name: 'probe', image: 'registry.invalid/probe:1' }] },
    };
    const run = runHooks(hooksOf(pod), 'post-install', options(ns));
    // kwok makes a Pod no Job owns Running and leaves it there; once it is, end it as a kubelet would.
    await eventually('the hook Pod to be running', async () => {
      const p = await live('v1', 'Pod', ns, 'probe');
      return p?.status?.phase === 'Running';
    });
    await client.mergePatch(
      { apiVersion: 'v1', kind: 'Pod', namespace: ns, name: 'probe' },
      {
        status: {
          phase: 'Failed',
          containerStatuses: [
            {
              name: 'probe',
              image: 'registry.invalid/probe:1',
              imageID: '',
              ready: false,
              restartCount: 0,
              state: { terminated: { exitCode: 3, reason: 'Error' } },
            },
          ],
        },
      },
      'status',
    );
    const result = await run;
    assert.ok(!result.ok);
    assert.match(result.failed.message, /pod probe failed: container probe exited with code 3 \(Error\)/);
  });

  test('the wait ends at the timeout with a message that says so', async (t) => {
    const ns = await testNamespace(t, 'hooks-timeout', { workloads: true });
    const result = await runHooks(
      hooksOf(job('stuck', 'never')),
      'pre-install',
      options(ns, { timeoutMs: 1_500 }),
    );
    assert.ok(!result.ok);
    assert.match(result.failed.message, /timed out after 1\.5s waiting for Job\/.+\/stuck to complete/);
    assert.deepEqual(
      result.ran.map((o) => o.phase),
      ['Failed'],
    );
  });

  test('an abort cancels the wait and leaves the objects as they are', async (t) => {
    const ns = await testNamespace(t, 'hooks-abort', { workloads: true });
    const abort = new AbortController();
    const hooks = hooksOf(
      job('stuck', 'never', { deletePolicy: 'hook-failed' }),
      configMap('later', {}, { weight: 1 }),
    );
    const run = runHooks(hooks, 'pre-install', options(ns, { signal: abort.signal }));
    await eventually('the hook Job to exist', async () => (await liveJob(ns, 'stuck')) !== undefined);
    abort.abort(new Error('a newer revision arrived'));
    await assert.rejects(run, /a newer revision arrived/);
    assert.ok(await liveJob(ns, 'stuck'), 'hook-failed must not run on a cancelled wait');
    assert.equal(await liveConfigMap(ns, 'later'), undefined);
  });
});

describe('helm test on the cluster', () => {
  test('a test that fails reports Failed with the Job message; a passing one before it Succeeded', async (t) => {
    const ns = await testNamespace(t, 'hooks-test', { workloads: true });
    const hooks = hooksOf(
      job('install-hook', 'completes'),
      job('connects', 'completes', { event: 'test', weight: 1 }),
      job('helm2-style', 'completes', { event: 'test-success', weight: 2 }),
      job('queries', 'fails', { event: 'test', weight: 3 }),
    );
    const result = await runTests(hooks, options(ns));
    assert.ok(!result.ok);
    assert.equal(result.failed.name, 'queries');
    assert.match(result.failed.message, /^test hook Job\/.+\/queries .*failed: /);
    assert.match(result.failed.message, DEADLINE);
    assert.deepEqual(
      result.ran.map((o) => [o.name, o.phase]),
      [
        ['connects', 'Succeeded'],
        ['helm2-style', 'Succeeded'],
        ['queries', 'Failed'],
      ],
    );
    assert.equal(await liveJob(ns, 'install-hook'), undefined, 'a pre-install hook ran as a test');
  });

  test('filters: an excluded test does not run, a named one runs alone', async (t) => {
    const ns = await testNamespace(t, 'hooks-filter', { workloads: true });
    const hooks = hooksOf(
      job('connects', 'completes', { event: 'test' }),
      job('queries', 'fails', { event: 'test' }),
    );
    const excluded = await runTests(hooks, { ...options(ns), filters: [{ name: 'queries', exclude: true }] });
    assert.ok(excluded.ok, JSON.stringify(excluded));
    assert.deepEqual(
      excluded.ran.map((o) => o.name),
      ['connects'],
    );
    const named = await runTests(hooks, { ...options(ns), filters: [{ name: 'connects' }] });
    assert.ok(named.ok, JSON.stringify(named));
    assert.deepEqual(
      named.ran.map((o) => o.name),
      ['connects'],
    );
    assert.equal(await liveJob(ns, 'queries'), undefined);
  });
});

describe('hooks as the release service account', () => {
  test('a hook the account may not create fails with RBAC message, no Secret data in it', async (t) => {
    const ns = await testNamespace(t, 'hooks-rbac', { workloads: true });
    const user = `system:serviceaccount:${ns}:deployer`;
    await client.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'hooks', namespace: ns },
      rules: [{ apiGroups: ['batch'], resources: ['jobs'], verbs: ['get', 'create', 'delete'] }],
    });
    await client.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'hooks', namespace: ns },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'hooks' },
      subjects: [{ kind: 'ServiceAccount', name: 'deployer', namespace: ns }],
    });
    // The authorizer learns of the binding from its own watch: wait until it allows a read.
    await eventually('the RoleBinding to take effect', async () => {
      try {
        await client.request({
          method: 'GET',
          path: `/apis/batch/v1/namespaces/${ns}/jobs/none`,
          impersonate: { user },
        });
      } catch (err) {
        if (err instanceof ApiError && err.statusCode === 404) return true;
        throw err;
      }
    });
    const password = 'hunter2-never-shown';
    const secret: KubeObject = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'db', annotations: hookAnnotations({ weight: 1 }) },
      stringData: { password },
    };
    const hooks = hooksOf(job('migrate', 'completes'), secret);
    const result = await runHooks(hooks, 'pre-install', options(ns, { impersonate: { user } }));
    assert.ok(!result.ok);
    assert.equal(result.failed.name, 'db');
    // before-hook-creation reads as the account first, so the refusal may come from that delete.
    assert.match(
      result.failed.message,
      new RegExp(
        `User "${user}" cannot (delete|create) resource "secrets" in API group "" in the namespace "${ns}"`,
      ),
    );
    assert.ok(!JSON.stringify(result).includes(password));
    assert.ok(!JSON.stringify(result).includes(Buffer.from(password).toString('base64')));
    // The Job it may create ran, as that account.
    assert.deepEqual(
      result.ran.map((o) => [o.name, o.phase]),
      [['migrate', 'Succeeded']],
    );
    assert.equal(await live('v1', 'Secret', ns, 'db'), undefined);
  });
});

describe('the hooks of a chart that bin/helm renders', () => {
  const chart = join(import.meta.dirname, 'testdata/hooks/chart');
  const helm = join(import.meta.dirname, '../../../bin/helm');

  test('install, upgrade and test hooks run from helm template output, split as the reconciler splits it', async (t) => {
    const ns = await testNamespace(t, 'hooks-chart', { workloads: true });
    const home = await mkdtemp(join(tmpdir(), 'mooring-helm-home-'));
    t.after(() => rm(home, { recursive: true, force: true }));
    const { stdout } = await promisify(execFile)(helm, ['template', 'app', chart, '--namespace', ns], {
      env: { HOME: home, PATH: '/usr/bin:/bin' },
    });
    const { hooks } = splitRender(stdout);

    const install = await runHooks(hooks, 'pre-install', options(ns));
    assert.ok(install.ok, JSON.stringify(install));
    assert.deepEqual(
      install.ran.map((o) => [o.kind, o.name]),
      [
        ['ConfigMap', 'app-seed'],
        ['Job', 'app-migrate'],
      ],
    );
    assert.deepEqual((await liveConfigMap(ns, 'app-seed'))?.data, { seeded: 'true' });
    assert.equal(await liveJob(ns, 'app-migrate'), undefined, 'hook-succeeded left the Job');
    assert.equal(await liveConfigMap(ns, 'app-settings'), undefined, 'a release object ran as a hook');

    const upgrade = await runHooks(hooks, 'pre-upgrade', options(ns));
    assert.ok(upgrade.ok, JSON.stringify(upgrade));
    assert.deepEqual(
      upgrade.ran.map((o) => o.name),
      ['app-migrate'],
    );

    const tests = await runTests(hooks, options(ns));
    assert.ok(tests.ok, JSON.stringify(tests));
    assert.deepEqual(
      tests.ran.map((o) => [o.name, o.phase]),
      [['app-check', 'Succeeded']],
    );
    assert.ok(await liveJob(ns, 'app-check'), 'a test without hook-succeeded stays, as helm test leaves it');
  });
});
