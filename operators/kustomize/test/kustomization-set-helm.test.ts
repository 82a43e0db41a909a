// A KustomizationSet whose template is a HelmRelease, on the control plane with workloads: a list
// generator releases the fixture chart twice from a Git source; a parameter change upgrades both in
// a two-step rollout, the second held until the first is Ready at the new revision (its Pods are
// kept off every node by a per-test node selector until the test labels a kwok node); a generator
// that finds nothing keeps both; an element removed deletes its HelmRelease, which uninstalls.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { KUSTOMIZE_API_VERSION } from '@mooring/api';
import type { KubeObject } from '@mooring/runtime';
import { eventually, uniqueName } from '@mooring/test/harness';
import {
  chartFiles,
  condition,
  type HelmStack,
  hrKey,
  startHelmStack,
  waitForHelmRelease,
} from './helm-release-fixture.ts';

const SET = { apiVersion: KUSTOMIZE_API_VERSION, kind: 'KustomizationSet' };
const REVISION = 'kustomize.mooring.dev/set-revision';

interface FleetStatus {
  conditions?: { type: string; status: string; reason: string; message: string }[];
  members?: {
    name: string;
    kustomization: string;
    kind?: string;
    state: string;
    revision?: string;
    appliedRevision?: string;
    releaseVersion?: number;
  }[];
  rollout?: { step: number; phase: string; message?: string };
  counts?: { total: number; current: number };
}

// The Deployment schedules only where `gate` (a node label key) is "open"; empty means anywhere.
const GATED_DEPLOYMENT = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-app
spec:
  replicas: 1
  selector:
    matchLabels:
      app: {{ .Release.Name }}-app
  template:
    metadata:
      labels:
        app: {{ .Release.Name }}-app
    spec:
      {{- with .Values.gate }}
      nodeSelector:
        {{ . }}: "open"
      {{- end }}
      containers:
        - name: app
          image: registry.invalid/probe:{{ .Chart.AppVersion }}
`;

let stack: HelmStack;
let ns: string;
let setName: string;
let gate: string;
let gatedNode: string | undefined;

const fleet = async () =>
  (await stack.client.get<KubeObject & { status?: FleetStatus }>({ ...SET, namespace: ns, name: setName }))
    .status ?? {};
const ready = (s: FleetStatus) => s.conditions?.find((c) => c.type === 'Ready');
const setElements = (elements: unknown[]) =>
  stack.client.mergePatch(
    { ...SET, namespace: ns, name: setName },
    { spec: { generators: [{ list: { elements } }] } },
  );
const element = (name: string, greeting: string, elementGate = '') => ({
  name,
  greeting,
  gate: elementGate,
  labels: { wave: name },
});
const releasedConfig = (release: string) =>
  stack.client.getOrUndefined<KubeObject & { data?: Record<string, string> }>({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    namespace: ns,
    name: `${release}-config`,
  });

before(async () => {
  stack = await startHelmStack('hrset');
  ns = stack.namespace;
  gate = `gate.mooring.dev/${ns}`;
  const repo = await stack.git.createRepo(uniqueName('charts'));
  await repo.commit(chartFiles({ 'templates/deployment.yaml': GATED_DEPLOYMENT }));
  const source = uniqueName('charts');
  await stack.client.create({
    apiVersion: 'source.mooring.dev/v1',
    kind: 'GitRepository',
    metadata: { name: source, namespace: ns },
    spec: { url: repo.url, interval: '10m', ref: { branch: 'main' } },
  } as KubeObject);
  setName = uniqueName('probes');
  await stack.client.create({
    ...SET,
    metadata: { name: setName, namespace: ns },
    spec: {
      interval: '5s',
      generators: [{ list: { elements: [element('first', 'hello'), element('second', 'hello')] } }],
      strategy: { rollingUpdate: { steps: [{ selector: { matchLabels: { wave: 'first' } } }] } },
      template: {
        apiVersion: 'helm.mooring.dev/v2',
        kind: 'HelmRelease',
        metadata: { name: 'probe-{{ .name }}', labels: { wave: '{{ .name }}' } },
        spec: {
          interval: '10m',
          timeout: '10m',
          chart: {
            spec: {
              chart: './charts/probe',
              sourceRef: { kind: 'GitRepository', name: source },
              interval: '10m',
            },
          },
          values: { greeting: '{{ .greeting }}', gate: '{{ .gate }}' },
        },
      },
    },
  } as KubeObject);
});

after(async () => {
  if (gatedNode)
    await stack.client
      .mergePatch(
        { apiVersion: 'v1', kind: 'Node', name: gatedNode },
        { metadata: { labels: { [gate]: null } } },
      )
      .catch(() => {});
  // The set first, while the operators run: its HelmReleases uninstall.
  await stack.client.delete({ ...SET, namespace: ns, name: setName }).catch(() => {});
  await eventually(
    'the set to be gone',
    async () => !(await stack.client.getOrUndefined({ ...SET, namespace: ns, name: setName })),
    60_000,
  ).catch(() => {});
  await stack?.stop();
});

describe('KustomizationSet with a HelmRelease template', () => {
  test('a list generator makes one owned HelmRelease per element, each released', async () => {
    for (const name of ['probe-first', 'probe-second']) {
      const hr = await waitForHelmRelease(
        stack,
        name,
        'True',
        (o) => o.status?.history?.[0]?.version === 1,
        120_000,
      );
      assert.equal((hr.metadata.ownerReferences as { kind: string }[])[0]?.kind, 'KustomizationSet');
      assert.ok(hr.metadata.annotations?.[REVISION], 'it carries the set revision');
      assert.equal((await releasedConfig(name))?.data?.greeting, 'hello');
    }
    const s = await eventually(
      'the fleet Ready with two current members',
      async () => {
        const st = await fleet();
        return ready(st)?.status === 'True' && st.counts?.current === 2 && st;
      },
      60_000,
    );
    assert.match(ready(s)!.message, /2 of 2 HelmReleases/);
    for (const m of s.members ?? []) {
      assert.equal(m.kind, 'HelmRelease');
      assert.equal(m.appliedRevision, 'probe@0.1.0');
      assert.equal(m.releaseVersion, 1);
    }
  });

  test('a parameter change upgrades the first step, holds the second until the first is Ready, then upgrades it', async () => {
    const before = await stack.client.get(hrKey(ns, 'probe-second'));
    // The first's new Pods schedule nowhere until a node carries the gate label.
    await setElements([element('first', 'bonjour', gate), element('second', 'bonjour')]);
    const held = await eventually(
      'the first upgrading and the rollout waiting on it',
      async () => {
        const first = await stack.client.get<KubeObject & { spec: { values?: { greeting?: string } } }>(
          hrKey(ns, 'probe-first'),
        );
        const st = await fleet();
        return (
          first.spec.values?.greeting === 'bonjour' &&
          st.rollout?.phase === 'Progressing' &&
          /waiting for probe-first/.test(st.rollout.message ?? '') &&
          st
        );
      },
      60_000,
    );
    assert.equal(held.rollout?.step, 1);
    const pending = await stack.client.get(hrKey(ns, 'probe-first'));
    const pendingReady = condition(pending, 'Ready');
    assert.ok(
      pendingReady?.status !== 'True' || pendingReady.observedGeneration !== pending.metadata.generation,
      'the first is not Ready at its new generation: its Pod cannot schedule',
    );
    const second = await stack.client.get(hrKey(ns, 'probe-second'));
    assert.equal(second.metadata.generation, before.metadata.generation, 'the second is not updated');
    assert.equal(second.metadata.annotations?.[REVISION], before.metadata.annotations?.[REVISION]);
    assert.equal((await releasedConfig('probe-second'))?.data?.greeting, 'hello');

    const nodes = await stack.client.list('v1', 'Node');
    gatedNode = nodes.items[0]?.metadata.name;
    assert.ok(gatedNode, 'the plane has a kwok node');
    await stack.client.mergePatch(
      { apiVersion: 'v1', kind: 'Node', name: gatedNode },
      { metadata: { labels: { [gate]: 'open' } } },
    );
    await waitForHelmRelease(
      stack,
      'probe-first',
      'True',
      (o) => o.status?.history?.[0]?.version === 2,
      180_000,
    );
    await waitForHelmRelease(
      stack,
      'probe-second',
      'True',
      (o) => o.status?.history?.[0]?.version === 2,
      180_000,
    );
    for (const name of ['probe-first', 'probe-second'])
      assert.equal((await releasedConfig(name))?.data?.greeting, 'bonjour', `${name} upgraded`);
    const done = await eventually(
      'the rollout complete',
      async () => {
        const st = await fleet();
        return ready(st)?.status === 'True' && st.rollout?.phase === 'Complete' && st;
      },
      60_000,
    );
    assert.deepEqual(
      done.members?.map((m) => [m.name, m.state, m.releaseVersion]),
      [
        ['probe-first', 'Current', 2],
        ['probe-second', 'Current', 2],
      ],
    );
  });

  test('a generator that finds nothing keeps both HelmReleases and their releases, and says why', async () => {
    await setElements([]);
    const refused = await eventually(
      'EmptyGenerationRefused',
      async () => {
        const r = ready(await fleet());
        return r?.reason === 'EmptyGenerationRefused' && r;
      },
      30_000,
    );
    assert.equal(refused.status, 'False');
    assert.match(refused.message, /nothing is deleted/);
    for (const name of ['probe-first', 'probe-second']) {
      const hr = await stack.client.get(hrKey(ns, name));
      assert.ok(!hr.metadata.deletionTimestamp, `${name} kept`);
      assert.ok(await releasedConfig(name), `${name}'s release kept`);
    }
  });

  test('an element removed deletes its HelmRelease, which uninstalls its release; the other stays', async () => {
    await setElements([element('first', 'bonjour', gate)]);
    await eventually(
      'probe-second and its release gone',
      async () =>
        !(await stack.client.getOrUndefined(hrKey(ns, 'probe-second'))) &&
        !(await releasedConfig('probe-second')),
      120_000,
    );
    const releaseRecords = await stack.client.list('v1', 'Secret', {
      namespace: ns,
      labelSelector: 'owner=helm,name=probe-second',
    });
    assert.equal(releaseRecords.items.length, 0, 'no Helm release record of probe-second is left');
    assert.equal(
      (await releasedConfig('probe-first'))?.data?.greeting,
      'bonjour',
      'probe-first keeps its release',
    );
    await eventually(
      'one member, Ready',
      async () => {
        const st = await fleet();
        return st.counts?.total === 1 && ready(st)?.status === 'True';
      },
      60_000,
    );
  });
});
