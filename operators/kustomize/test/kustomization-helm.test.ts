// A Kustomization whose source has `helmCharts:` on the real control plane: the chart renders in
// the sandbox with .Capabilities from the target cluster's discovery, and a chart that exhausts
// the renderer's memory or time limit is refused with HelmRenderFailed (condition and event) while
// the last good revision stays applied.
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

    // A string of 1 GiB in a 256 MiB sandbox.
    await repo.commit({
      'app/charts/probe/templates/hog.yaml':
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: hog\ndata:\n  x: {{ repeat 1073741824 "x" | quote }}\n',
    });
    await requestReconcile('GitRepository', ns, source);
    const hog = await waitForKustomization(
      ns,
      name,
      'False',
      (o) => condition(o, 'Ready')?.reason === 'HelmRenderFailed',
      180_000,
    );
    assert.match(condition(hog, 'Ready')!.message, /charts\/probe .*memory limit/);
    assert.equal(hog.status!.lastAppliedRevision, good.status!.lastAppliedRevision);
    assert.ok(await getObject('v1', 'ConfigMap', ns, 'probe-capabilities'), 'the last good revision stays');
    await eventually('a HelmRenderFailed event', async () =>
      (await eventReasons(name)).includes('HelmRenderFailed'),
    );

    // A range that never ends, stopped at the time limit.
    await repo.commit({
      'app/charts/probe/templates/hog.yaml': null,
      'app/charts/probe/templates/loop.yaml': '{{- range 9223372036854775807 }}{{ end }}\n',
    });
    await requestReconcile('GitRepository', ns, source);
    const loop = await waitForKustomization(
      ns,
      name,
      'False',
      (o) => /time limit/.test(condition(o, 'Ready')?.message ?? ''),
      300_000,
    );
    assert.equal(condition(loop, 'Ready')!.reason, 'HelmRenderFailed');
    assert.match(condition(loop, 'Ready')!.message, /took longer than the 45000 ms time limit/);
    assert.equal(loop.status!.lastAppliedRevision, good.status!.lastAppliedRevision);
    assert.ok(await getObject('v1', 'ConfigMap', ns, 'probe-capabilities'), 'the last good revision stays');
    assert.equal(await getObject('v1', 'ConfigMap', ns, 'hog'), undefined);
  });
});
