// A fleet on three real control planes: the test plane and two private ones, each registered as a
// cluster Secret. One KustomizationSet installs an agent stack (Namespace, DaemonSet, ConfigMap with
// a per-cluster label and a per-region value) into each, and the tests follow it through label
// changes, generator errors, a waved rollout with a broken revision, a removed and a stopped cluster.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { KUSTOMIZE_API_VERSION } from '@mooring/api';
import { KubeClient, type KubeObject } from '@mooring/runtime';
import { eventually, testCluster, uniqueName } from '@mooring/test/harness';
import { down, locationAt, up } from '../../../hack/lib/control-plane.ts';
import { gitSource, type Stack, startStack } from './fixture.ts';

interface Plane {
  name: string;
  kubeconfig: string;
  client: KubeClient;
  stop(): Promise<void>;
}

async function privatePlane(name: string): Promise<Plane> {
  const dir = await mkdtemp(join(tmpdir(), `mooring-fleet-${name}-`));
  const running = await up(locationAt(dir), () => {});
  const client = await KubeClient.fromKubeconfig(running.kubeconfig);
  let stopped = false;
  return {
    name,
    kubeconfig: running.kubeconfig,
    client,
    async stop() {
      if (stopped) return;
      stopped = true;
      client.close();
      await down(locationAt(dir));
      await rm(dir, { recursive: true, force: true });
    },
  };
}

const SET = { apiVersion: KUSTOMIZE_API_VERSION, kind: 'KustomizationSet' };
const KS = { apiVersion: KUSTOMIZE_API_VERSION, kind: 'Kustomization' };
const AGENT_NS = uniqueName('fleet-agent');

const agentFiles = (folder: string, version: string): Record<string, string> => ({
  [`${folder}/ns.yaml`]: `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${AGENT_NS}\n`,
  [`${folder}/cm.yaml`]: `apiVersion: v1
kind: ConfigMap
metadata:
  name: agent-config
  namespace: ${AGENT_NS}
  labels:
    cluster: "\${cluster}"
data:
  region: "\${region}"
  version: ${version}
`,
  [`${folder}/ds.yaml`]: `apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: node-agent
  namespace: ${AGENT_NS}
  labels:
    cluster: "\${cluster}"
spec:
  selector: {matchLabels: {app: node-agent}}
  template:
    metadata:
      labels:
        app: node-agent
        region: "\${region}"
    spec:
      containers: [{name: agent, image: 'quay.io/prometheus/node-exporter:v1.8.2'}]
`,
});

interface FleetStatus {
  conditions?: { type: string; status: string; reason: string; message: string }[];
  members?: {
    name: string;
    kustomization: string;
    state: string;
    ready: string;
    message?: string;
    revision?: string;
  }[];
  rollout?: { step: number; phase: string; message?: string };
  counts?: { total: number; current: number; failed: number; unreachable: number };
}

let stack: Stack;
let ns: string;
let main: KubeClient;
let planes: Record<string, Plane>;
let setName: string;

const clusterSecret = async (name: string, kubeconfig: string, labels: Record<string, string>) =>
  main.create({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: `cluster-${name}`, namespace: ns, labels: { 'mooring.dev/cluster': name, ...labels } },
    stringData: { value: await readFile(kubeconfig, 'utf8') },
  } as KubeObject);

const fleet = async () =>
  (await main.get<KubeObject & { status?: FleetStatus }>({ ...SET, namespace: ns, name: setName })).status ??
  {};
const ready = (s: FleetStatus) => s.conditions?.find((c) => c.type === 'Ready');
const agentConfig = (client: KubeClient) =>
  client.getOrUndefined<KubeObject & { data?: Record<string, string> }>({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    namespace: AGENT_NS,
    name: 'agent-config',
  });
const kustomizationPath = async (cluster: string) =>
  (
    await main.get<KubeObject & { spec: { path: string } }>({
      ...KS,
      namespace: ns,
      name: `agent-${cluster}`,
    })
  ).spec.path;
const setPath = (path: string) =>
  main.mergePatch({ ...SET, namespace: ns, name: setName }, { spec: { template: { spec: { path } } } });

before(async () => {
  stack = await startStack('fleet');
  ns = stack.namespace;
  main = (await testCluster()).client;
  const [a, b] = await Promise.all([privatePlane('a'), privatePlane('b')]);
  planes = { a: a!, b: b! };
  await clusterSecret('main', (await testCluster()).kubeconfig, { env: 'staging', region: 'eu' });
  await clusterSecret('a', planes.a!.kubeconfig, { env: 'prod', region: 'us' });
  await clusterSecret('b', planes.b!.kubeconfig, { env: 'prod', region: 'eu' });
  const { name: source } = await gitSource(stack, {
    ...agentFiles('agent', 'v1'),
    ...agentFiles('agent-v2', 'v2'),
    ...agentFiles('agent-v3', 'v3'),
  });
  setName = uniqueName('agents');
  await main.create({
    ...SET,
    metadata: { name: setName, namespace: ns },
    spec: {
      interval: '3s',
      generators: [{ clusters: {} }],
      strategy: { rollingUpdate: { steps: [{ selector: { matchLabels: { env: 'staging' } } }] } },
      template: {
        metadata: { name: 'agent-{{ .cluster.name }}', labels: { region: '{{ .cluster.labels.region }}' } },
        spec: {
          sourceRef: { kind: 'GitRepository', name: source },
          path: 'agent',
          interval: '1m',
          retryInterval: '3s',
          prune: true,
          kubeConfig: { secretRef: { name: '{{ .cluster.secretName }}' } },
          postBuild: {
            substitute: { cluster: '{{ .cluster.name }}', region: '{{ .cluster.labels.region }}' },
          },
        },
      },
    },
  } as KubeObject);
});

after(async () => {
  // The set first, while the operators run: its Kustomizations prune what they applied.
  await main.delete({ ...SET, namespace: ns, name: setName }).catch(() => {});
  await eventually(
    'the set to be gone',
    async () => !(await main.getOrUndefined({ ...SET, namespace: ns, name: setName })),
    30_000,
  ).catch(() => {});
  await stack?.stop();
  // The Kustomization of the stopped cluster keeps retrying its prune (as it must); this test
  // plane is shared, so its finalizers and the Secret's go, for the namespace to be deleted.
  for (const kind of [KS, { apiVersion: 'v1', kind: 'Secret' }]) {
    const left = await main.list(kind.apiVersion, kind.kind, { namespace: ns }).catch(() => ({ items: [] }));
    for (const o of left.items)
      await main
        .mergePatch(
          { ...kind, namespace: ns, name: o.metadata.name ?? '' },
          { metadata: { finalizers: null } },
        )
        .catch(() => {});
  }
  await Promise.all(Object.values(planes ?? {}).map((p) => p.stop()));
});

describe('KustomizationSet: a fleet on three control planes', () => {
  test('installs the agent into every cluster with its own cluster label and region value', async () => {
    await eventually(
      'three members current and Ready',
      async () => {
        const s = await fleet();
        return ready(s)?.status === 'True' && s.counts?.current === 3 && s;
      },
      60_000,
    );
    for (const [client, cluster, region] of [
      [main, 'main', 'eu'],
      [planes.a!.client, 'a', 'us'],
      [planes.b!.client, 'b', 'eu'],
    ] as const) {
      const cm = await agentConfig(client);
      assert.equal(cm?.data?.region, region, `region on ${cluster}`);
      assert.equal(cm?.metadata.labels?.cluster, cluster);
      const ds = await client.get({
        apiVersion: 'apps/v1',
        kind: 'DaemonSet',
        namespace: AGENT_NS,
        name: 'node-agent',
      });
      assert.equal(ds.metadata.labels?.cluster, cluster);
    }
    const ks = await main.get({ ...KS, namespace: ns, name: 'agent-a' });
    assert.equal((ks.metadata.ownerReferences as { kind: string }[])[0]?.kind, 'KustomizationSet');
    assert.equal(ks.metadata.labels?.region, 'us');
  });

  test("a label change on a cluster Secret changes its parameter, and that cluster's objects follow", async () => {
    await main.mergePatch(
      { apiVersion: 'v1', kind: 'Secret', namespace: ns, name: 'cluster-a' },
      { metadata: { labels: { region: 'ap' } } },
    );
    await eventually(
      'the ConfigMap on cluster a to say region ap',
      async () => (await agentConfig(planes.a!.client))?.data?.region === 'ap',
      60_000,
    );
    assert.equal((await agentConfig(planes.b!.client))?.data?.region, 'eu', 'cluster b is unchanged');
  });

  test('a generator error, or a generator that finds nothing, keeps every Kustomization and says why', async () => {
    const generators = (g: unknown[]) =>
      main.mergePatch({ ...SET, namespace: ns, name: setName }, { spec: { generators: g } });
    await generators([{ clusters: { selector: { matchExpressions: [{ key: 'env', operator: 'Near' }] } } }]);
    const failed = await eventually(
      'GeneratorFailed',
      async () => {
        const r = ready(await fleet());
        return r?.reason === 'GeneratorFailed' && r;
      },
      30_000,
    );
    assert.equal(failed.status, 'False');
    assert.match(failed.message, /Near.*kept as they are/);
    const events = await main.list('v1', 'Event', { namespace: ns });
    assert.ok(
      events.items.some((e) => (e as KubeObject & { reason?: string }).reason === 'GeneratorFailed'),
      'an event says so',
    );

    await generators([{ clusters: { selector: { matchLabels: { env: 'nowhere' } } } }]);
    await eventually(
      'EmptyGenerationRefused',
      async () => ready(await fleet())?.reason === 'EmptyGenerationRefused',
      30_000,
    );
    for (const c of ['main', 'a', 'b'])
      assert.ok(await main.getOrUndefined({ ...KS, namespace: ns, name: `agent-${c}` }), `agent-${c} kept`);
    assert.ok(await agentConfig(planes.b!.client), 'objects on the clusters kept');

    await generators([{ clusters: {} }]);
    await eventually('Ready again', async () => ready(await fleet())?.status === 'True', 60_000);
  });

  test('a broken revision stops after the staging wave with the rest untouched; the fix rolls out to all', async () => {
    await setPath('agent-missing');
    const failed = await eventually(
      'the rollout to fail at step 1',
      async () => {
        const s = await fleet();
        return s.rollout?.phase === 'Failed' && s;
      },
      60_000,
    );
    assert.equal(failed.rollout?.step, 1);
    assert.equal(ready(failed)?.reason, 'RolloutFailed');
    assert.match(ready(failed)!.message, /main/);
    assert.equal(await kustomizationPath('main'), 'agent-missing', 'staging got the new revision');
    assert.equal(await kustomizationPath('a'), 'agent', 'prod keeps the previous revision');
    assert.equal(await kustomizationPath('b'), 'agent');
    assert.equal((await agentConfig(planes.a!.client))?.data?.version, 'v1');

    await setPath('agent-v2');
    await eventually(
      'v2 on every cluster',
      async () => {
        for (const c of [main, planes.a!.client, planes.b!.client])
          if ((await agentConfig(c))?.data?.version !== 'v2') return false;
        return ready(await fleet())?.status === 'True';
      },
      90_000,
    );
  });

  test('removing a cluster Secret removes its Kustomization and, by deletion policy, its objects', async () => {
    await main.delete({ apiVersion: 'v1', kind: 'Secret', namespace: ns, name: 'cluster-a' });
    await eventually(
      'the objects on cluster a to be pruned',
      async () => !(await agentConfig(planes.a!.client)),
      60_000,
    );
    await eventually(
      'agent-a and the Secret to be gone',
      async () =>
        !(await main.getOrUndefined({ ...KS, namespace: ns, name: 'agent-a' })) &&
        !(await main.getOrUndefined({ apiVersion: 'v1', kind: 'Secret', namespace: ns, name: 'cluster-a' })),
      60_000,
    );
    assert.ok(await agentConfig(planes.b!.client), 'cluster b keeps its agent');
    await eventually('two members', async () => (await fleet()).counts?.total === 2, 30_000);
  });

  test('a stopped cluster is reported and skipped; the others converge', async () => {
    await planes.b!.stop();
    await setPath('agent-v3');
    const s = await eventually(
      'main at v3 and b reported unreachable',
      async () => {
        const st = await fleet();
        const b = st.members?.find((m) => m.name === 'b');
        return (await agentConfig(main))?.data?.version === 'v3' && b?.state === 'Unreachable' && st;
      },
      90_000,
    );
    assert.match(ready(s)!.message, /unreachable, skipped: b/);
    assert.equal(s.counts?.unreachable, 1);
  });
});
