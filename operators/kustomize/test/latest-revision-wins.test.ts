// Latest revision wins, on the control plane with workloads: a revision whose Deployment never
// becomes healthy waits under a 10-minute timeout; the fix pushed meanwhile (a new source
// revision, a new generation, a new chart artifact) ends that wait and is applied at once. Each
// test reads the object's own status times: the fix is Ready while the broken revision's timeout
// has not elapsed, whatever the machine's speed.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { KUSTOMIZE_API_VERSION, SOURCE_API_VERSION } from '@mooring/api';
import { ReleaseStore } from '@mooring/helm';
import type { KubeObject } from '@mooring/runtime';
import { eventually, uniqueName } from '@mooring/test/harness';
import {
  chartFiles,
  chartRepo,
  type HelmStack,
  hrKey,
  requestReconcile,
  startHelmStack,
  waitForHelmRelease,
} from './helm-release-fixture.ts';

const BROKEN_TIMEOUT_MS = 10 * 60_000;

let stack: HelmStack;
let ns: string;
before(async () => {
  stack = await startHelmStack('latest-wins');
  ns = stack.namespace;
});
after(() => stack?.stop());

interface Ks extends KubeObject {
  status?: {
    conditions?: {
      type: string;
      status: string;
      reason: string;
      message: string;
      lastTransitionTime: string;
      observedGeneration?: number;
    }[];
    lastAppliedRevision?: string;
    lastAttemptedRevision?: string;
  };
}

/** A Deployment of one replica; `broken` pins it to a node that does not exist, so it never becomes Available. */
const deployment = (name: string, broken: boolean) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
spec:
  replicas: 1
  selector:
    matchLabels: {app: ${name}}
  template:
    metadata:
      labels: {app: ${name}}
    spec:${broken ? '\n      nodeSelector: {mooring.dev/no-such-node: "true"}' : ''}
      containers:
        - name: app
          image: registry.invalid/app:1
`;

/** Ready=`status` at the current generation and `when`, read from the workloads plane; the error carries the last status. */
async function waitForReady(
  key: { apiVersion: string; kind: string; namespace: string; name: string },
  status: 'True' | 'False',
  when: (o: Ks) => boolean,
  timeoutMs: number,
): Promise<Ks> {
  let last: Ks | undefined;
  try {
    return await eventually(
      `${key.kind} ${key.name} Ready=${status}`,
      async () => {
        last = await stack.client.get<Ks>(key);
        const r = ready(last);
        return r?.status === status && r.observedGeneration === last.metadata.generation && when(last)
          ? last
          : undefined;
      },
      timeoutMs,
    );
  } catch (err) {
    throw new Error(`${(err as Error).message}; last status: ${JSON.stringify(last?.status)}`);
  }
}

const ready = (o: Ks | undefined) => o?.status?.conditions?.find((c) => c.type === 'Ready');

async function kustomizationOnWorkload(name: string) {
  const source = uniqueName('repo');
  const repo = await stack.git.createRepo(source);
  await repo.commit({ 'deploy/app.yaml': deployment(name, false) });
  await stack.client.create({
    apiVersion: SOURCE_API_VERSION,
    kind: 'GitRepository',
    metadata: { name: source, namespace: ns },
    spec: { url: repo.url, interval: '1h', ref: { branch: 'main' } },
  } as KubeObject);
  await stack.client.create({
    apiVersion: KUSTOMIZE_API_VERSION,
    kind: 'Kustomization',
    metadata: { name, namespace: ns },
    spec: {
      sourceRef: { kind: 'GitRepository', name: source },
      path: './deploy',
      interval: '1h',
      timeout: '10m',
      prune: true,
      wait: true,
    },
  } as KubeObject);
  const key = { apiVersion: KUSTOMIZE_API_VERSION, kind: 'Kustomization', namespace: ns, name };
  await waitForReady(key, 'True', () => true, 120_000);
  const push = async (broken: boolean) => {
    const commit = await repo.commit({ 'deploy/app.yaml': deployment(name, broken) });
    await requestReconcile(stack, SOURCE_API_VERSION, 'GitRepository', source);
    return `main@sha1:${commit}`;
  };
  /** Waits until the reconcile of `revision` is in its health wait; returns when that wait began. */
  const waiting = async (revision: string) => {
    const obj = await eventually(
      `the health wait of ${revision}`,
      async () => {
        const k = await stack.client.get<Ks>(key);
        const r = ready(k);
        return k.status?.lastAttemptedRevision === revision &&
          r?.status === 'Unknown' &&
          /waiting for 1 objects to become healthy/.test(r.message)
          ? k
          : undefined;
      },
      120_000,
    );
    return Date.parse(ready(obj)!.lastTransitionTime);
  };
  return { key, push, waiting };
}

describe('latest revision wins', () => {
  test('a new source revision ends the health wait of a broken one: the fix is Ready long before the broken timeout', async () => {
    const name = uniqueName('fix');
    const { key, push, waiting } = await kustomizationOnWorkload(name);
    const broken = await push(true);
    const waitBegan = await waiting(broken);
    const fix = await push(false);
    const done = await waitForReady(key, 'True', (k) => k.status?.lastAppliedRevision === fix, 180_000);
    const readyAt = Date.parse(ready(done)!.lastTransitionTime);
    assert.ok(
      readyAt - waitBegan < BROKEN_TIMEOUT_MS,
      `the fix was Ready ${readyAt - waitBegan} ms after the broken revision began to wait`,
    );
    // The broken revision is never reported applied, and its reconcile said what superseded it.
    const events = await stack.client.list('v1', 'Event', { namespace: ns });
    const superseded = events.items.filter(
      (e) =>
        (e as { reason?: string }).reason === 'Superseded' &&
        (e as { involvedObject?: { name?: string } }).involvedObject?.name === name,
    ) as (KubeObject & { message?: string })[];
    assert.ok(superseded.length > 0, 'a Superseded event');
    assert.match(
      superseded[0]!.message ?? '',
      new RegExp(`revision '${broken}' superseded by revision '${fix}' during 'check health'`),
    );
  });

  test('a spec change (new generation) ends the health wait of the revision in flight', async () => {
    const name = uniqueName('spec');
    const { key, push, waiting } = await kustomizationOnWorkload(name);
    const broken = await push(true);
    const waitBegan = await waiting(broken);
    // The user stops waiting for this Deployment: generation 2 applies the same revision without the wait.
    await stack.client.mergePatch(key, { spec: { wait: false } });
    const done = await waitForReady(key, 'True', (k) => k.metadata.generation === 2, 180_000);
    assert.equal(done.status?.lastAppliedRevision, broken);
    assert.ok(Date.parse(ready(done)!.lastTransitionTime) - waitBegan < BROKEN_TIMEOUT_MS);
  });

  test("a HelmRelease's new chart artifact ends the health wait of a broken chart version", async () => {
    const { repo, name: source } = await chartRepo(stack);
    const name = uniqueName('chart');
    await stack.client.create({
      apiVersion: 'helm.mooring.dev/v2',
      kind: 'HelmRelease',
      metadata: { name, namespace: ns },
      spec: {
        interval: '1h',
        timeout: '10m',
        chart: {
          spec: {
            chart: './charts/probe',
            sourceRef: { kind: 'GitRepository', name: source },
            interval: '1h',
          },
        },
      },
    } as KubeObject);
    await waitForHelmRelease(stack, name, 'True', (o) => o.status?.history?.[0]?.version === 1, 180_000);
    const chartYaml = chartFiles()['charts/probe/Chart.yaml']!;
    const values = chartFiles()['charts/probe/values.yaml']!;
    const withVersion = (v: string) => chartYaml.replace(/^version: .*$/m, `version: ${v}`);
    // 0.2.0 is unschedulable by default: its upgrade waits up to ten minutes.
    await repo.commit({
      'charts/probe/Chart.yaml': withVersion('0.2.0'),
      'charts/probe/values.yaml': values.replace(/^unschedulable: .*$/m, 'unschedulable: true'),
    });
    await requestReconcile(stack, SOURCE_API_VERSION, 'GitRepository', source);
    const store = new ReleaseStore(stack.client, { namespace: ns });
    await eventually(
      'v2 waiting',
      async () => (await store.latest(name))?.info.status === 'pending-upgrade',
      180_000,
    );
    const hr = await stack.client.get<Ks>(hrKey(ns, name));
    const waitBegan = Date.parse(ready(hr)!.lastTransitionTime);
    // 0.3.0 is the fix: a new HelmChart artifact, the HelmRelease's spec unchanged.
    await repo.commit({
      'charts/probe/Chart.yaml': withVersion('0.3.0'),
      'charts/probe/values.yaml': values,
    });
    await requestReconcile(stack, SOURCE_API_VERSION, 'GitRepository', source);
    const done = await waitForHelmRelease(
      stack,
      name,
      'True',
      (o) => o.status?.history?.[0]?.chartVersion === '0.3.0',
      180_000,
    );
    assert.equal(done.metadata.generation, 1);
    assert.ok(Date.parse(ready(done as Ks)!.lastTransitionTime) - waitBegan < BROKEN_TIMEOUT_MS);
    const history = await store.history(name);
    assert.deepEqual(
      history.map((r) => [r.version, r.chart?.metadata?.version, r.info.status]),
      [
        [1, '0.1.0', 'superseded'],
        [2, '0.2.0', 'failed'],
        [3, '0.3.0', 'deployed'],
      ],
    );
    assert.match(
      history[1]!.info.description ?? '',
      /^Superseded while waiting: chart revision '0\.2\.0' superseded by revision '0\.3\.0'/,
    );
  });
});
