// The pull path of a KustomizationSet (delivery mode git), on two real control planes: the set on
// the test plane commits one file per cluster into a fleet repository served by a real Git
// smart-HTTP server; the agent on a private plane (its own source and kustomize operators and a
// root Kustomization at clusters/a, the shape `mooring bootstrap git --path clusters/a` makes)
// applies its folder, and the set reads that agent's member (GET only) to report it Ready at the
// commit. Cluster b has no kubeconfig: its file is committed and it is reported as such.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { KUSTOMIZE_API_VERSION, SOURCE_API_VERSION } from '@mooring/api';
import type { KubeClient, KubeObject } from '@mooring/runtime';
import { sourceOperator } from '@mooring/source-operator';
import {
  eventually,
  git,
  privateControlPlane,
  startInProcessOperators,
  type TestRepo,
  testCluster,
  uniqueName,
} from '@mooring/test/harness';
import { parse } from 'yaml';
import { kustomizeOperator } from '../src/kustomize-operator.ts';
import { configMap, gitSource, startStack } from './fixture.ts';

const SET = { apiVersion: KUSTOMIZE_API_VERSION, kind: 'KustomizationSet' };

interface FleetStatus {
  revision?: string;
  rollout?: { step: number; phase: string; message?: string };
  conditions?: { type: string; status: string; reason: string; message: string }[];
  members?: {
    name: string;
    state: string;
    ready: string;
    message?: string;
    path?: string;
    commit?: string;
  }[];
}

test('KustomizationSet in delivery mode git: per-cluster folders in the fleet repository, applied by each agent', async (t) => {
  const stack = await startStack('fleet-pull');
  const ns = stack.namespace;
  const main = (await testCluster()).client;
  const home = await mkdtemp(join(tmpdir(), 'mooring-fleet-pull-home-'));
  const { repo, name: fleetSource } = await gitSource(stack, {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: postBuild's ${var}, filled in by each agent.
    'apps/agent/cm.yaml': configMap('agent-config', { cluster: '${cluster}', version: '${version}' }),
    // The agent's folder holds more than the set's file (bootstrap's mooring-system/ is there too),
    // so it still exists once the set's file is gone, and the agent prunes.
    'clusters/a/cluster-info.yaml': configMap('cluster-info', { name: 'a' }, `  namespace: ${ns}\n`),
  });
  const setName = uniqueName('agents');
  const fileOf = (cluster: string) => `clusters/${cluster}/${setName}.yaml`;
  const show = (path: string, rev = 'main') =>
    git(['show', `${rev}:${path}`], { cwd: repo.bareDir, home }).catch(() => undefined);
  const lastCommitOf = (path: string) =>
    git(['log', '-1', '--format=%H', 'main', '--', path], { cwd: repo.bareDir, home });
  const fleet = async () =>
    (await main.get<KubeObject & { status?: FleetStatus }>({ ...SET, namespace: ns, name: setName }))
      .status ?? {};
  const ready = (s: FleetStatus) => s.conditions?.find((c) => c.type === 'Ready');
  const member = (s: FleetStatus, name: string) => s.members?.find((m) => m.name === name);

  const plane = await privateControlPlane(t);
  const agent = await startAgent(plane, ns, repo);
  try {
    await main.create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'cluster-a', namespace: ns, labels: { 'mooring.dev/cluster': 'a', env: 'staging' } },
      stringData: { value: await readFile(plane.kubeconfig, 'utf8') },
    } as KubeObject);
    // A cluster registered for its parameters only: nothing can read its agent.
    await main.create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'cluster-b', namespace: ns, labels: { 'mooring.dev/cluster': 'b', env: 'prod' } },
    } as KubeObject);
    await main.create({
      ...SET,
      metadata: { name: setName, namespace: ns },
      spec: {
        interval: '3s',
        delivery: { mode: 'git', gitRepositoryRef: { name: fleetSource } },
        generators: [{ clusters: {} }],
        strategy: { rollingUpdate: { steps: [{ selector: { matchLabels: { env: 'staging' } } }] } },
        template: {
          metadata: { name: 'agent-{{ .cluster.name }}' },
          spec: {
            // The agent's own source of the fleet repository, on its cluster.
            sourceRef: { kind: 'GitRepository', name: 'fleet' },
            path: 'apps/agent',
            interval: '1m',
            retryInterval: '2s',
            prune: true,
            targetNamespace: ns,
            // Push mode's field, left out of the files: each agent applies to its own cluster.
            kubeConfig: { secretRef: { name: '{{ .cluster.secretName }}' } },
            postBuild: { substitute: { cluster: '{{ .cluster.name }}', version: 'v1' } },
          },
        },
      },
    } as KubeObject);

    await t.test('writes one file per cluster into the fleet repository', async () => {
      const files = await eventually(
        'both files on main',
        async () => {
          const [a, b] = await Promise.all([show(fileOf('a')), show(fileOf('b'))]);
          return a && b && { a, b };
        },
        60_000,
      );
      for (const [cluster, text] of Object.entries(files)) {
        const obj = parse(text) as KubeObject & { spec: Record<string, unknown> };
        assert.equal(obj.kind, 'Kustomization');
        assert.equal(obj.metadata.name, `agent-${cluster}`);
        assert.equal(obj.metadata.namespace, ns);
        assert.equal(obj.spec.path, 'apps/agent');
        assert.deepEqual(obj.spec.postBuild, { substitute: { cluster, version: 'v1' } });
        assert.equal(obj.spec.kubeConfig, undefined, 'no kubeConfig: the agent applies locally');
        assert.doesNotMatch(text, /certificate|token|BEGIN/, 'no credential in the repository');
      }
      assert.equal(await agentConfig(main, ns), undefined, 'nothing applied on the management cluster');
    });

    await t.test(
      'the agent applies its folder, and the set reports that member Ready at the commit',
      async () => {
        await eventually(
          'the ConfigMap on cluster a',
          async () => (await agentConfig(plane.client, ns))?.data?.cluster === 'a',
          90_000,
        );
        const s = await eventually(
          'the set Ready with a Current',
          async () => {
            const st = await fleet();
            return ready(st)?.status === 'True' && member(st, 'a')?.state === 'Current' && st;
          },
          60_000,
        );
        const a = member(s, 'a')!;
        assert.equal(a.ready, 'True');
        assert.equal(a.path, fileOf('a'));
        assert.equal(a.commit, await lastCommitOf(fileOf('a')));
        const b = member(s, 'b')!;
        assert.equal(b.state, 'Committed');
        assert.equal(b.ready, 'Unknown');
        assert.equal(b.commit, await lastCommitOf(fileOf('b')));
        assert.match(b.message ?? '', /no kubeconfig/);
      },
    );

    await t.test("a change is committed for step 2 only once step 1's agent is Ready at it", async () => {
      // Cluster a's agent holds still, so it cannot be Ready at the change until it resumes.
      const root = { apiVersion: KUSTOMIZE_API_VERSION, kind: 'Kustomization', namespace: ns, name: 'root' };
      await plane.client.mergePatch(root, { spec: { suspend: true } });
      const before = (await fleet()).revision;
      await main.mergePatch(
        { ...SET, namespace: ns, name: setName },
        { spec: { template: { spec: { postBuild: { substitute: { version: 'v2' } } } } } },
      );
      await eventually(
        "the set waiting for a's agent at the new revision",
        async () => {
          const st = await fleet();
          return (
            st.revision !== before && /step 1: waiting for a to be Ready/.test(st.rollout?.message ?? '')
          );
        },
        60_000,
      );
      assert.match((await show(fileOf('a'))) ?? '', /version: v2/, "a's file holds the change");
      assert.match((await show(fileOf('b'))) ?? '', /version: v1/, "b's waits for a's agent");
      assert.equal((await agentConfig(plane.client, ns))?.data?.version, 'v1');

      await plane.client.mergePatch(root, { spec: { suspend: null } });
      await eventually(
        "v2 on cluster a, then in b's file",
        async () =>
          (await agentConfig(plane.client, ns))?.data?.version === 'v2' &&
          /version: v2/.test((await show(fileOf('b'))) ?? ''),
        120_000,
      );
      assert.notEqual(
        await lastCommitOf(fileOf('a')),
        await lastCommitOf(fileOf('b')),
        'two commits, two waves',
      );
    });

    await t.test('removing an element removes its file; the agent of the others keeps its own', async () => {
      await main.delete({ apiVersion: 'v1', kind: 'Secret', namespace: ns, name: 'cluster-b' });
      await eventually('b file gone', async () => (await show(fileOf('b'))) === undefined, 60_000);
      assert.ok(await show(fileOf('a')), "a's file stays");
      assert.ok(await agentConfig(plane.client, ns), "a's agent keeps its objects");
    });

    await t.test('a generator that finds nothing keeps the files and commits nothing', async () => {
      const head = await repo.revParse('main');
      await main.mergePatch(
        { ...SET, namespace: ns, name: setName },
        { spec: { generators: [{ clusters: { selector: { matchLabels: { env: 'nowhere' } } } }] } },
      );
      const refused = await eventually(
        'EmptyGenerationRefused',
        async () => {
          const r = ready(await fleet());
          return r?.reason === 'EmptyGenerationRefused' && r;
        },
        30_000,
      );
      assert.match(refused.message, /no file is removed/);
      assert.ok(await show(fileOf('a')), "a's file kept");
      assert.equal(await repo.revParse('main'), head, 'no commit');
    });

    await t.test('deleting the set removes its files, and the agent prunes what they applied', async () => {
      await main.delete({ ...SET, namespace: ns, name: setName });
      await eventually('a file gone', async () => (await show(fileOf('a'))) === undefined, 60_000);
      await eventually('the agent pruned', async () => !(await agentConfig(plane.client, ns)), 90_000);
    });
  } finally {
    await main.delete({ ...SET, namespace: ns, name: setName }).catch(() => {});
    await agent.stop();
    await stack.stop();
    await rm(home, { recursive: true, force: true });
  }
});

/** The agent on a cluster: its operators, and a root Kustomization at clusters/a of the fleet repository. */
async function startAgent(
  plane: { kubeconfig: string; client: KubeClient },
  namespace: string,
  repo: TestRepo,
): Promise<{ stop(): Promise<void> }> {
  await plane.client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  const storage = await mkdtemp(join(tmpdir(), 'mooring-agent-storage-'));
  const operators = await startInProcessOperators(
    [sourceOperator(), kustomizeOperator()],
    namespace,
    ['--storage-path', storage, '--storage-addr', '127.0.0.1:0', '--requeue-dependency', '2s'],
    { kubeconfig: plane.kubeconfig },
  );
  await plane.client.create({
    apiVersion: SOURCE_API_VERSION,
    kind: 'GitRepository',
    metadata: { name: 'fleet', namespace },
    spec: { url: repo.url, interval: '2s', ref: { branch: 'main' } },
  } as KubeObject);
  await plane.client.create({
    apiVersion: KUSTOMIZE_API_VERSION,
    kind: 'Kustomization',
    metadata: { name: 'root', namespace },
    spec: {
      sourceRef: { kind: 'GitRepository', name: 'fleet' },
      path: 'clusters/a',
      interval: '1m',
      retryInterval: '2s',
      prune: true,
    },
  } as KubeObject);
  return {
    async stop() {
      await operators.stop();
      await rm(storage, { recursive: true, force: true, maxRetries: 5 });
    },
  };
}

const agentConfig = (client: KubeClient, namespace: string) =>
  client.getOrUndefined<KubeObject & { data?: Record<string, string> }>({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    namespace,
    name: 'agent-config',
  });
