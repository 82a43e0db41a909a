// A Kustomization whose source has `helmCharts:` on the real control plane: the chart renders in
// the sandbox with .Capabilities from the target cluster's discovery, and a chart that exhausts
// the renderer's memory or time limit is refused with HelmRenderFailed (condition and event) while
// the last good revision stays applied; `lookup` reads the target cluster as the Kustomization's
// service account, and only what that account may read.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { eventually, testCluster, uniqueName } from '@mooring/test/harness';
import {
  condition,
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
  // Generous for a chart that renders (a busy machine starts the renderer slowly), short enough for
  // the one that never ends to be stopped within the test.
  stack = await startStack('ks-helm', ['--helm-render-timeout', '45s', '--helm-render-memory', '256']);
  ns = stack.namespace;
});
after(() => stack?.stop());

const chartYaml = 'apiVersion: v2\nname: probe\nversion: 0.1.0\n';
const goodTemplate = `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-capabilities
data:
  kubeVersion: {{ .Capabilities.KubeVersion.Version | quote }}
  servesKustomizations: {{ .Capabilities.APIVersions.Has "kustomize.mooring.dev/v1/Kustomization" | quote }}
  greeting: {{ .Values.greeting | quote }}
`;
const kustomization =
  'helmCharts:\n- name: probe\n  releaseName: probe\n  valuesInline:\n    greeting: hello\n';

async function eventReasons(name: string): Promise<string[]> {
  const { client } = await testCluster();
  const events = await client.list('v1', 'Event', { namespace: ns });
  return events.items
    .map((e) => e as unknown as { reason?: string; involvedObject?: { name?: string } })
    .filter((e) => e.involvedObject?.name === name)
    .map((e) => e.reason ?? '');
}

type Kustomization = Awaited<ReturnType<typeof waitForKustomization>>;

/** Pushes `files` to the source and waits until the Kustomization is refused for the reason `refused` tells. */
async function pushAndWaitForRefusal(
  push: {
    repo: { commit(files: Record<string, string | null>): Promise<unknown> };
    source: string;
    name: string;
  },
  files: Record<string, string | null>,
  refused: (o: Kustomization) => boolean,
  timeoutMs: number,
): Promise<Kustomization> {
  await push.repo.commit(files);
  await requestReconcile('GitRepository', ns, push.source);
  return waitForKustomization(ns, push.name, 'False', refused, timeoutMs);
}

const renderFailed = (o: Kustomization): boolean => condition(o, 'Ready')?.reason === 'HelmRenderFailed';

describe('Kustomization with helmCharts', () => {
  test('renders the chart with the target cluster capabilities; a chart over the memory or time limit is refused, the last good revision kept', async () => {
    const { repo, name: source } = await gitSource(stack, {
      'app/kustomization.yaml': kustomization,
      'app/charts/probe/Chart.yaml': chartYaml,
      'app/charts/probe/values.yaml': 'greeting: default\n',
      'app/charts/probe/templates/cm.yaml': goodTemplate,
    });
    const name = uniqueName('helm');
    await createKustomization(stack, name, {
      sourceRef: { kind: 'GitRepository', name: source },
      path: 'app',
    });
    const good = await waitForKustomization(ns, name, 'True', () => true, 180_000);

    const { client } = await testCluster();
    const version = await client.request<{ gitVersion: string }>({ method: 'GET', path: '/version' });
    const cm = (await getObject('v1', 'ConfigMap', ns, 'probe-capabilities')) as
      | { data?: Record<string, string> }
      | undefined;
    assert.ok(cm, 'the chart was applied');
    // Offline helm would say v1.37.0 and not know Mooring's kinds: these come from the cluster.
    assert.equal(cm.data?.kubeVersion, version.gitVersion);
    assert.equal(cm.data?.servesKustomizations, 'true');
    assert.equal(cm.data?.greeting, 'hello');

    const push = { repo, source, name };
    // A string of 1 GiB in a 256 MiB sandbox.
    const hog = await pushAndWaitForRefusal(
      push,
      {
        'app/charts/probe/templates/hog.yaml':
          'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: hog\ndata:\n  x: {{ repeat 1073741824 "x" | quote }}\n',
      },
      renderFailed,
      180_000,
    );
    // A trap at the memory cap is reported as the memory limit, whatever Go printed before it.
    assert.match(condition(hog, 'Ready')!.message, /charts\/probe.*memory limit/);
    assert.equal(hog.status!.lastAppliedRevision, good.status!.lastAppliedRevision);
    assert.ok(await getObject('v1', 'ConfigMap', ns, 'probe-capabilities'), 'the last good revision stays');
    await eventually('a HelmRenderFailed event', async () =>
      (await eventReasons(name)).includes('HelmRenderFailed'),
    );

    // A range that never ends, stopped at the time limit.
    const loop = await pushAndWaitForRefusal(
      push,
      {
        'app/charts/probe/templates/hog.yaml': null,
        'app/charts/probe/templates/loop.yaml': '{{- range 9223372036854775807 }}{{ end }}\n',
      },
      (o) => /time limit/.test(condition(o, 'Ready')?.message ?? ''),
      300_000,
    );
    assert.equal(condition(loop, 'Ready')!.reason, 'HelmRenderFailed');
    assert.match(condition(loop, 'Ready')!.message, /took longer than the 45000 ms time limit/);
    assert.equal(loop.status!.lastAppliedRevision, good.status!.lastAppliedRevision);
    assert.ok(await getObject('v1', 'ConfigMap', ns, 'probe-capabilities'), 'the last good revision stays');
    assert.equal(await getObject('v1', 'ConfigMap', ns, 'hog'), undefined);
  });

  test('lookup reads the target cluster as the service account the apply uses, and only what it may read', async () => {
    const { client } = await testCluster();
    const sa = 'chart-reader';
    await client.create({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: sa, namespace: ns } });
    await client.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: sa, namespace: ns },
      rules: [
        {
          apiGroups: [''],
          resources: ['configmaps'],
          verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
        },
      ],
    } as never);
    await client.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: sa, namespace: ns },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: sa },
      subjects: [{ kind: 'ServiceAccount', name: sa, namespace: ns }],
    } as never);
    await client.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'settings', namespace: ns },
      data: { color: 'teal' },
    } as never);
    await client.create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'hidden', namespace: ns },
      stringData: { token: 'not-for-charts' },
    } as never);
    const { repo, name: source } = await gitSource(stack, {
      // The release namespace is the one lookup reads from (helm's default would be `default`).
      'app/kustomization.yaml': `helmCharts:\n- name: probe\n  releaseName: looked\n  namespace: ${ns}\n`,
      'app/charts/probe/Chart.yaml': chartYaml,
      'app/charts/probe/values.yaml': '{}\n',
      'app/charts/probe/templates/cm.yaml': `{{- $s := lookup "v1" "ConfigMap" .Release.Namespace "settings" }}
{{- $missing := lookup "v1" "ConfigMap" .Release.Namespace "absent" }}
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-seen
data:
  color: {{ dig "data" "color" "none" $s | quote }}
  listed: {{ len (lookup "v1" "ConfigMap" .Release.Namespace "").items | quote }}
  missing: {{ $missing | toJson | quote }}
`,
    });
    const name = uniqueName('lookup');
    await createKustomization(stack, name, {
      sourceRef: { kind: 'GitRepository', name: source },
      path: 'app',
      serviceAccountName: sa,
    });
    const good = await waitForKustomization(ns, name, 'True', () => true, 180_000);
    const seen = (await getObject('v1', 'ConfigMap', ns, 'looked-seen')) as { data?: Record<string, string> };
    assert.equal(seen.data?.color, 'teal', 'the live ConfigMap was read');
    assert.equal(seen.data?.missing, '{}', 'a missing object is an empty map, as in helm');
    assert.ok(Number(seen.data?.listed) >= 1);

    // The account may not read Secrets: neither may the chart.
    const refused = await pushAndWaitForRefusal(
      { repo, source, name },
      {
        'app/charts/probe/templates/secret.yaml':
          'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: leak\ndata:\n  token: {{ (lookup "v1" "Secret" .Release.Namespace "hidden").data.token | quote }}\n',
      },
      renderFailed,
      180_000,
    );
    assert.match(condition(refused, 'Ready')!.message, /forbidden/i);
    assert.doesNotMatch(JSON.stringify(refused.status), /not-for-charts|bm90LWZvci1jaGFydHM/);
    assert.equal(refused.status!.lastAppliedRevision, good.status!.lastAppliedRevision);
    assert.equal(await getObject('v1', 'ConfigMap', ns, 'leak'), undefined);
  });
});
