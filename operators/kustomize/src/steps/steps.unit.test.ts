// Each step of a Kustomization's reconcile (./index.ts) on its own, through its real signature,
// against the in-memory API server of test/simulation/fake-api-server.ts (a fake, for unit tests
// and the simulation only: operators/kustomize/test keeps the real API server) on a fake clock.
// No cluster, no sleeps: what a user of the Kustomization sees from each step, given what the API
// server holds.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  ConditionType,
  KUSTOMIZE_API_VERSION,
  KUSTOMIZE_NAME_LABEL,
  KUSTOMIZE_NAMESPACE_LABEL,
  type Kustomization,
  PRUNE_ANNOTATION,
  PRUNE_DISABLED,
  Reason,
  SOURCE_API_VERSION,
} from '@mooring/api';
import {
  ApiError,
  FakeClock,
  KubeClient,
  type KubeObject,
  type ReconcileContext,
  RetryableError,
  runSteps,
  StalledError,
  WaitingError,
} from '@mooring/runtime';
import { type RecordedEvent, stepContext } from '@mooring/test/harness/step-context';
import {
  errorResponse,
  FakeApiServer,
  FakeApiTransport,
} from '../../../../test/simulation/fake-api-server.ts';
import { ManagedVersions } from '../apply/managed-versions.ts';
import type { Manifest } from '../apply/object-policy.ts';
import { inventoryId, inventoryOf, type ObjectRef } from '../inventory.ts';
import { kustomizationReconciler } from '../kustomization-reconciler.ts';
import type { KustomizationRun } from '../kustomization-run.ts';
import { RemoteClusters } from '../remote-cluster.ts';
import { RenderCache, type Rendered, type RenderInputs } from '../render.ts';
import { kustomizationTimings } from '../timeouts.ts';
import { apply } from './apply.ts';
import { checkDependencies } from './check-dependencies.ts';
import { checkHealth } from './health.ts';
import { KUSTOMIZATION_STEPS } from './index.ts';
import { prune } from './prune.ts';
import { recordSuccess } from './record-success.ts';
import { refuseEmptyRender, render } from './render.ts';
import { resolveSource } from './resolve-source.ts';
import { joinStoredInventory } from './stored-inventory.ts';
import { validateSpec } from './validate-spec.ts';

const START = Date.UTC(2026, 0, 1);
const NS = 'apps';
const NAME = 'app';
const REVISION = 'main@sha1:1111111111111111111111111111111111111111';
const DEPENDENCY_MS = 7_000;

/** The render, handed out as the real one hands it (owner labels on), or failing as asked. */
class StubRenderCache extends RenderCache {
  readonly calls: RenderInputs[] = [];
  answer: (inputs: RenderInputs) => Manifest[];

  constructor(answer: (inputs: RenderInputs) => Manifest[]) {
    super(1);
    this.answer = answer;
  }

  override async get(inputs: RenderInputs, _signal: AbortSignal): Promise<Rendered> {
    this.calls.push(inputs);
    const manifests = this.answer(inputs).map((m) => ({
      ...m,
      metadata: { ...m.metadata, labels: { ...m.metadata.labels, ...ownerLabels() } },
    }));
    return { manifests, digest: `sha256:${manifests.length}` };
  }
}

const ownerLabels = () => ({ [KUSTOMIZE_NAME_LABEL]: NAME, [KUSTOMIZE_NAMESPACE_LABEL]: NS });

const configMap = (name: string, annotations?: Record<string, string>): Manifest => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: NS, ...(annotations ? { annotations } : {}) },
  data: { name },
});

const ref = (kind: string, name: string, apiVersion = 'v1'): ObjectRef => ({
  apiVersion,
  kind,
  namespace: NS,
  name,
});

interface Saved {
  message: string;
  /** status.inventory when the progress was written. */
  inventory: string[];
  /** The owned objects the API server held at that moment. */
  live: string[];
}

interface World {
  clock: FakeClock;
  server: FakeApiServer;
  transport: FakeApiTransport;
  client: KubeClient;
  renders: StubRenderCache;
  /** Objects of the test's making, as `kubectl apply` writes them; `status` through the subresource. */
  put(obj: KubeObject & { status?: unknown }): Promise<void>;
  /** The ids of the objects on the API server that carry this Kustomization's owner labels. */
  live(): string[];
  /** A run of the Kustomization `spec` (stored on the API server first), with `previous` as its inventory. */
  runOf(
    spec?: Partial<Kustomization['spec']>,
    previous?: ObjectRef[],
    options?: { conditionalSaves?: boolean },
  ): Promise<Run>;
}

interface Run {
  run: KustomizationRun;
  saved: Saved[];
  events: RecordedEvent[];
  condition(type: string): { status: string; reason: string; message: string } | undefined;
}

async function world(): Promise<World> {
  const clock = new FakeClock(START);
  const server = new FakeApiServer({ now: () => clock.now() });
  const transport = new FakeApiTransport(server);
  const client = new KubeClient(transport, { qps: 1e9, burst: 1e9, userAgent: 'mooring-test' });
  const renders = new StubRenderCache(() => [configMap('a')]);
  const put: World['put'] = async (obj) => {
    const { status, ...rest } = obj;
    await client.apply(rest as KubeObject, { fieldManager: 'kubectl', force: true });
    if (status !== undefined)
      await client.applyStatus({ ...rest, status } as KubeObject, { fieldManager: 'kubectl', force: true });
  };
  const live = () =>
    [...server.objects.values()]
      .filter((o) => o.metadata.labels?.[KUSTOMIZE_NAME_LABEL] === NAME)
      .map((o) =>
        inventoryId({
          apiVersion: o.apiVersion,
          kind: o.kind,
          namespace: o.metadata.namespace ?? '',
          name: o.metadata.name ?? '',
        }),
      )
      .sort();
  await put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  await put(gitRepository('app', { artifact: artifactOf(REVISION) }));

  const runOf: World['runOf'] = async (spec = {}, previous, options = {}) => {
    const inventory = previous ? inventoryOf(previous) : undefined;
    await put({
      apiVersion: KUSTOMIZE_API_VERSION,
      kind: 'Kustomization',
      metadata: { name: NAME, namespace: NS },
      spec: { sourceRef: { kind: 'GitRepository', name: 'app' }, interval: '10m', prune: true, ...spec },
      ...(inventory ? { status: { inventory } } : {}),
    });
    const obj = (await client.get({
      apiVersion: KUSTOMIZE_API_VERSION,
      kind: 'Kustomization',
      namespace: NS,
      name: NAME,
    })) as Kustomization;
    const status: NonNullable<Kustomization['status']> = structuredClone(obj.status ?? {});
    const saved: Saved[] = [];
    const { ctx: recording, events } = stepContext(status, () => clock.now());
    const ctx: ReconcileContext = {
      ...recording,
      // As the controller does: the status built so far is written to the API server now.
      saveProgress: async (message) => {
        await save(message);
      },
      // As the controller does: only while the object is at the version the run started from.
      ...(options.conditionalSaves && {
        saveProgressIfUnchanged: (message: string) =>
          save(message, writtenAt).then(
            () => true,
            (err: unknown) => {
              if (err instanceof ApiError && err.isConflict) return false;
              throw err;
            },
          ),
      }),
    };
    let writtenAt = obj.metadata.resourceVersion;
    const save = async (message: string, ifVersion?: string) => {
      const stored = await client.applyStatus(
        {
          apiVersion: KUSTOMIZE_API_VERSION,
          kind: 'Kustomization',
          metadata: { name: NAME, namespace: NS, ...(ifVersion && { resourceVersion: ifVersion }) },
          status: structuredClone(status),
        },
        { fieldManager: 'mooring', force: true },
      );
      writtenAt = stored.metadata.resourceVersion;
      saved.push({ message, inventory: (status.inventory?.entries ?? []).map((e) => e.id), live: live() });
    };
    const run: KustomizationRun = {
      obj,
      ctx,
      status,
      deps: {
        client,
        renderCache: renders,
        noCrossNamespaceRefs: false,
        defaultServiceAccount: undefined,
        requeueDependencyMs: DEPENDENCY_MS,
        concurrentApplies: 2,
      },
      memory: {
        knownVersions: new Map(),
        healthy: new Map(),
        remotes: new RemoteClusters(),
        lastInventory: new Map(),
      },
      started: performance.now(),
      timings: kustomizationTimings(obj),
      owner: { name: NAME, namespace: NS },
      signal: new AbortController().signal,
      previous: obj.status?.inventory,
    };
    transport.requests.length = 0;
    const condition = (type: string) => status.conditions?.find((c) => c.type === type);
    return { run, saved, events, condition };
  };
  return { clock, server, transport, client, renders, put, live, runOf };
}

function artifactOf(revision: string, metadata?: Record<string, string>) {
  return {
    path: `gitrepository/${NS}/app/x.tar.gz`,
    url: `http://source/gitrepository/${NS}/app/x.tar.gz`,
    revision,
    digest: 'sha256:0',
    lastUpdateTime: '2026-01-01T00:00:00Z',
    ...(metadata ? { metadata } : {}),
  };
}

function gitRepository(name: string, status: Record<string, unknown>, namespace = NS) {
  return {
    apiVersion: SOURCE_API_VERSION,
    kind: 'GitRepository',
    metadata: { name, namespace },
    spec: { url: `https://git.example/${name}`, interval: '1m', ref: { branch: 'main' } },
    status,
  };
}

/** Runs the steps before `name` of the list, so the step under test finds what they fill. */
async function runUpTo(run: KustomizationRun, name: string): Promise<void> {
  const i = KUSTOMIZATION_STEPS.findIndex((s) => s.name === name);
  assert.ok(i >= 0, name);
  await runSteps(KUSTOMIZATION_STEPS.slice(0, i), run);
}

/**
 * Date.now and setTimeout on `clock` while `fn` runs (the health wait reads and sleeps on them),
 * the clock moved on in steps until `fn` settles: a wait of minutes passes at once and the same.
 */
async function onFakeTime<T>(clock: FakeClock, fn: () => Promise<T>): Promise<T> {
  const realNow = Date.now;
  const realSetTimeout = globalThis.setTimeout;
  const realClearTimeout = globalThis.clearTimeout;
  Date.now = () => clock.now();
  globalThis.setTimeout = ((cb: () => void, ms?: number) =>
    clock.setTimeout(cb, ms ?? 0)) as unknown as typeof setTimeout;
  globalThis.clearTimeout = ((h: unknown) =>
    clock.clearTimeout(h as Parameters<FakeClock['clearTimeout']>[0])) as typeof clearTimeout;
  try {
    let settled = false;
    const pending = fn().finally(() => {
      settled = true;
    });
    pending.catch(() => {});
    for (let i = 0; i < 10_000 && !settled; i++) await clock.advanceAsync(250);
    assert.ok(settled, 'the step did not finish within 2500 simulated seconds');
    return await pending;
  } finally {
    Date.now = realNow;
    globalThis.setTimeout = realSetTimeout;
    globalThis.clearTimeout = realClearTimeout;
  }
}

/** The operator's watch of what Kustomizations applied, as kustomize-operator.ts makes it. */
const managedVersions = (w: World) =>
  new ManagedVersions(w.client, {
    labelSelector: KUSTOMIZE_NAME_LABEL,
    ownerLabels: [KUSTOMIZE_NAME_LABEL, KUSTOMIZE_NAMESPACE_LABEL],
  });

/** Waits (real time: the watch is delivered asynchronously) until `cond` holds. */
async function until(what: string, cond: () => boolean): Promise<void> {
  for (let i = 0; i < 2_000 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(cond(), `${what}: not within 10 s`);
}

/** The requests a pass sent, without the watches it holds open. */
const sent = (t: FakeApiTransport) => t.requests.filter((r) => !r.startsWith('WATCH '));

const writes = (t: FakeApiTransport) =>
  t.requests.filter((r) => !r.startsWith('GET ') && !r.includes('dryRun=All'));

// ---------------------------------------------------------------------------------------------
// validate spec

test('validate spec: decryption.serviceAccountName is refused as UnsupportedConfiguration, before any request', async () => {
  const w = await world();
  const { run } = await w.runOf({ decryption: { provider: 'sops', serviceAccountName: 'sops' } });
  assert.throws(
    () => validateSpec(run),
    (err: unknown) =>
      err instanceof StalledError &&
      err.reason === Reason.UnsupportedConfiguration &&
      err.message === 'decryption.serviceAccountName is not supported yet; use secretRef',
  );
  assert.deepEqual(w.transport.requests, []);
});

test('validate spec: a healthCheckExprs expression that does not compile stalls with InvalidCELExpression', async () => {
  const w = await world();
  const { run } = await w.runOf({
    healthCheckExprs: [{ apiVersion: 'example.com/v1', kind: 'Widget', current: 'self.status.ready ==' }],
  });
  assert.throws(
    () => validateSpec(run),
    (err: unknown) => err instanceof StalledError && err.reason === Reason.InvalidCELExpression,
  );
  const ok = await w.runOf({
    healthCheckExprs: [
      { apiVersion: 'example.com/v1', kind: 'Widget', current: 'self.status.ready == true' },
    ],
  });
  assert.equal(validateSpec(ok.run), undefined);
  assert.equal(ok.run.healthExprs?.rules.length, 1);
});

// ---------------------------------------------------------------------------------------------
// resolve source

test('resolve source: a source without an artifact says why, waits at the dependency interval, and stops the list', async () => {
  const w = await world();
  await w.put(
    gitRepository('app', {
      conditions: [
        {
          type: 'Ready',
          status: 'False',
          reason: 'AuthenticationFailed',
          message: 'Git authentication failed with the credentials in Secret apps/git',
          lastTransitionTime: '2026-01-01T00:00:00Z',
        },
      ],
    }),
  );
  const { run } = await w.runOf();
  const ran: string[] = [];
  await assert.rejects(
    runSteps(KUSTOMIZATION_STEPS, run, (name) => ran.push(name)),
    (err: unknown) =>
      err instanceof WaitingError &&
      err.reason === Reason.ArtifactFailed &&
      err.requeueAfterMs === DEPENDENCY_MS &&
      err.message ===
        'GitRepository apps/app has no artifact yet: Git authentication failed with the credentials in Secret apps/git',
  );
  assert.deepEqual(ran, ['validate spec', 'resolve source']);
  assert.equal(w.renders.calls.length, 0);
  assert.equal(run.status.lastAttemptedRevision, undefined);
  assert.deepEqual(writes(w.transport), []);
});

test('resolve source: a missing source is retried; another namespace under --no-cross-namespace-refs stalls', async () => {
  const w = await world();
  const missing = await w.runOf({ sourceRef: { kind: 'GitRepository', name: 'gone' } });
  await assert.rejects(
    resolveSource(missing.run),
    (err: unknown) =>
      err instanceof RetryableError &&
      err.reason === Reason.ArtifactFailed &&
      err.message === 'GitRepository apps/gone not found',
  );
  const { run } = await w.runOf({ sourceRef: { kind: 'GitRepository', name: 'app', namespace: 'other' } });
  (run.deps as { noCrossNamespaceRefs: boolean }).noCrossNamespaceRefs = true;
  await assert.rejects(
    resolveSource(run),
    (err: unknown) =>
      err instanceof StalledError &&
      err.reason === Reason.AccessDenied &&
      /references to other namespaces are not allowed/.test(err.message),
  );
  assert.deepEqual(w.transport.requests, [], 'refused before asking the API server');
});

test('resolve source: a ready source gives its artifact, and this cluster is the target without kubeConfig', async () => {
  const w = await world();
  const { run } = await w.runOf();
  await resolveSource(run);
  assert.equal(run.source?.artifact.revision, REVISION);
  assert.deepEqual(
    { kind: run.source?.kind, namespace: run.source?.namespace, name: run.source?.name },
    { kind: 'GitRepository', namespace: NS, name: 'app' },
  );
  assert.equal(run.target, w.client);
});

// ---------------------------------------------------------------------------------------------
// check dependencies

async function putDependency(w: World, name: string, ready: 'True' | 'False', lastAppliedRevision?: string) {
  await w.put({
    apiVersion: KUSTOMIZE_API_VERSION,
    kind: 'Kustomization',
    metadata: { name, namespace: NS },
    spec: { sourceRef: { kind: 'GitRepository', name: 'app' }, interval: '10m', prune: true },
  });
  const generation = w.server.get(KUSTOMIZE_API_VERSION, 'Kustomization', NS, name)!.metadata.generation;
  const status = {
    observedGeneration: generation,
    ...(lastAppliedRevision ? { lastAppliedRevision } : {}),
    conditions: [
      {
        type: 'Ready',
        status: ready,
        reason: ready === 'True' ? 'ReconciliationSucceeded' : 'HealthCheckFailed',
        message: ready === 'True' ? 'Applied revision' : 'Deployment/apps/db not ready',
        lastTransitionTime: '2026-01-01T00:00:00Z',
      },
    ],
  };
  await w.client.applyStatus(
    { apiVersion: KUSTOMIZE_API_VERSION, kind: 'Kustomization', metadata: { name, namespace: NS }, status },
    { fieldManager: 'kustomize-controller', force: true },
  );
}

test('check dependencies: a dependency not Ready waits at the dependency retry interval, saying which and why', async () => {
  const w = await world();
  await putDependency(w, 'infra', 'False');
  const { run } = await w.runOf({ dependsOn: [{ name: 'infra' }] });
  await runUpTo(run, 'check dependencies');
  await assert.rejects(
    checkDependencies(run),
    (err: unknown) =>
      err instanceof WaitingError &&
      err.reason === Reason.DependencyNotReady &&
      err.requeueAfterMs === DEPENDENCY_MS &&
      err.message ===
        "dependency 'apps/infra' is not ready: Kustomization apps/infra failed: HealthCheckFailed: Deployment/apps/db not ready.",
  );
  assert.equal(w.renders.calls.length, 0);
});

test('check dependencies: on the same source, a Ready dependency must have applied this revision first', async () => {
  const w = await world();
  await putDependency(w, 'infra', 'True', 'main@sha1:0000000000000000000000000000000000000000');
  const { run } = await w.runOf({ dependsOn: [{ name: 'infra' }] });
  await runUpTo(run, 'check dependencies');
  await assert.rejects(
    checkDependencies(run),
    (err: unknown) =>
      err instanceof WaitingError &&
      err.requeueAfterMs === DEPENDENCY_MS &&
      err.message === `dependency 'apps/infra' is not ready: revision ${REVISION} is not applied yet`,
  );
  await putDependency(w, 'infra', 'True', REVISION);
  const next = await w.runOf({ dependsOn: [{ name: 'infra' }] });
  await runUpTo(next.run, 'check dependencies');
  assert.equal(await checkDependencies(next.run), undefined);
});

test('check dependencies: a missing dependency waits; a cycle back to this Kustomization stalls', async () => {
  const w = await world();
  const missing = await w.runOf({ dependsOn: [{ name: 'nowhere' }] });
  await runUpTo(missing.run, 'check dependencies');
  await assert.rejects(
    checkDependencies(missing.run),
    (err: unknown) => err instanceof WaitingError && err.message === "dependency 'apps/nowhere' not found",
  );
  await w.put({
    apiVersion: KUSTOMIZE_API_VERSION,
    kind: 'Kustomization',
    metadata: { name: 'infra', namespace: NS },
    spec: {
      sourceRef: { kind: 'GitRepository', name: 'app' },
      interval: '10m',
      prune: true,
      dependsOn: [{ name: NAME }],
    },
  });
  const { run } = await w.runOf({ dependsOn: [{ name: 'infra' }] });
  await runUpTo(run, 'check dependencies');
  await assert.rejects(
    checkDependencies(run),
    (err: unknown) =>
      err instanceof StalledError &&
      err.reason === Reason.DependencyCycle &&
      err.message === 'dependency cycle: apps/app → apps/infra → apps/app',
  );
});

// ---------------------------------------------------------------------------------------------
// render

test('render: a failed render leaves the inventory as it was and writes nothing', async () => {
  const w = await world();
  const before = [ref('ConfigMap', 'a')];
  // A postBuild.substituteFrom ConfigMap that is not there (read through the fake API server) ...
  const missing = await w.runOf(
    { postBuild: { substituteFrom: [{ kind: 'ConfigMap', name: 'vars' }] } },
    before,
  );
  await runUpTo(missing.run, 'render');
  await assert.rejects(
    render(missing.run),
    (err: unknown) =>
      err instanceof RetryableError &&
      err.reason === Reason.BuildFailed &&
      err.message === 'ConfigMap apps/vars not found',
  );
  assert.deepEqual(missing.run.status.inventory, inventoryOf(before));
  assert.equal(missing.run.rendered, undefined);
  assert.equal(missing.run.status.lastAttemptedRevision, REVISION, 'the revision it tried is shown');
  assert.equal(w.renders.calls.length, 0);
  // ... and a build that fails.
  w.renders.answer = () => {
    throw new RetryableError(
      Reason.BuildFailed,
      "kustomize build failed: accumulating resources: 'missing.yaml'",
    );
  };
  const failing = await w.runOf({}, before);
  await runUpTo(failing.run, 'render');
  await assert.rejects(render(failing.run), /kustomize build failed/);
  assert.deepEqual(failing.run.status.inventory, inventoryOf(before));
  assert.equal(failing.run.previous?.entries.length, 1);
  assert.deepEqual(writes(w.transport), []);
});

test('render: the inputs are the artifact, path, owner and postBuild variables read from the cluster', async () => {
  const w = await world();
  await w.put({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'vars', namespace: NS },
    data: { region: 'eu', tier: 'from-configmap' },
  } as KubeObject);
  const { run } = await w.runOf({
    path: './deploy',
    postBuild: { substitute: { tier: 'inline' }, substituteFrom: [{ kind: 'ConfigMap', name: 'vars' }] },
  });
  await runUpTo(run, 'render');
  await render(run);
  const [inputs] = w.renders.calls;
  assert.equal(inputs?.artifact.revision, REVISION);
  assert.equal(inputs?.path, './deploy');
  assert.deepEqual(inputs?.owner, { name: NAME, namespace: NS });
  assert.deepEqual(inputs?.substitute?.vars, { region: 'eu', tier: 'inline' });
  assert.equal(run.rendered?.manifests.length, 1);
});

test('refuse empty render: nothing rendered while objects are applied is refused unless allowEmpty', async () => {
  const w = await world();
  w.renders.answer = () => [];
  const { run } = await w.runOf({}, [ref('ConfigMap', 'a')]);
  await runUpTo(run, 'refuse empty render');
  assert.throws(
    () => refuseEmptyRender(run),
    (err: unknown) =>
      err instanceof RetryableError &&
      err.reason === Reason.EmptyRenderRefused &&
      err.message ===
        `revision '${REVISION}' renders no objects while 1 are applied: refusing to prune them all; set spec.allowEmpty: true if this is intended`,
  );
  const allowed = await w.runOf({ allowEmpty: true }, [ref('ConfigMap', 'a')]);
  await runUpTo(allowed.run, 'refuse empty render');
  assert.equal(refuseEmptyRender(allowed.run), undefined);
});

// ---------------------------------------------------------------------------------------------
// apply

test('apply: what a stage will write joins status.inventory, and is saved, before the first write', async () => {
  const w = await world();
  w.renders.answer = () => [configMap('a'), configMap('b')];
  const first = await w.runOf();
  await runUpTo(first.run, 'apply');
  await apply(first.run);
  assert.deepEqual(first.saved, [
    {
      message: `applying revision '${REVISION}': 2 objects to write`,
      inventory: ['apps_a__ConfigMap', 'apps_b__ConfigMap'],
      live: [],
    },
  ]);
  assert.deepEqual(w.live(), ['apps_a__ConfigMap', 'apps_b__ConfigMap']);
  assert.deepEqual(first.run.applied, [ref('ConfigMap', 'a'), ref('ConfigMap', 'b')]);
  assert.deepEqual(
    first.events.map((e) => [e.reason, e.message]),
    [['Progressing', 'ConfigMap/apps/a created\nConfigMap/apps/b created']],
  );
  // The stored status holds the intent too: a crash now leaves nothing unlisted.
  const stored = w.server.get(KUSTOMIZE_API_VERSION, 'Kustomization', NS, NAME)!;
  assert.deepEqual(
    (stored.status?.inventory as { entries: { id: string }[] } | undefined)?.entries.map((e) => e.id),
    ['apps_a__ConfigMap', 'apps_b__ConfigMap'],
  );

  // The next revision adds c and drops b: the old inventory stays in the intent (prune needs it).
  w.renders.answer = () => [configMap('a'), configMap('c')];
  const next = await w.runOf({}, [ref('ConfigMap', 'a'), ref('ConfigMap', 'b')]);
  await runUpTo(next.run, 'apply');
  await apply(next.run);
  assert.deepEqual(next.saved, [
    {
      message: `applying revision '${REVISION}': 1 objects to write`,
      inventory: ['apps_a__ConfigMap', 'apps_b__ConfigMap', 'apps_c__ConfigMap'],
      live: ['apps_a__ConfigMap', 'apps_b__ConfigMap'],
    },
  ]);
  assert.deepEqual(
    next.events.map((e) => e.message),
    ['ConfigMap/apps/c created'],
  );
});

test('apply: the intent is written on condition that the Kustomization is unchanged, and then its stored status is not read', async () => {
  const w = await world();
  w.renders.answer = () => [configMap('a'), configMap('b')];
  const first = await w.runOf({}, undefined, { conditionalSaves: true });
  await runUpTo(first.run, 'apply');
  w.transport.requests.length = 0;
  await apply(first.run);
  assert.deepEqual(
    first.saved.map((s) => s.inventory),
    [['apps_a__ConfigMap', 'apps_b__ConfigMap']],
  );
  assert.deepEqual(first.saved[0]!.live, [], 'the intent is stored before any object is written');
  const reads = sent(w.transport).filter((r) => r.startsWith('GET ') && r.includes('/kustomizations/'));
  assert.deepEqual(reads, [], 'a write that succeeded on the version the run started from needs no read');
  await prune(first.run);
  assert.deepEqual(
    first.run.status.inventory?.entries.map((e) => e.id),
    ['apps_a__ConfigMap', 'apps_b__ConfigMap'],
  );
});

test('apply: when the Kustomization moved on since the run read it, the conditional intent is refused, the stored inventory is read and kept', async () => {
  const w = await world();
  w.renders.answer = () => [configMap('a')];
  const { run, saved } = await w.runOf({ prune: true }, undefined, { conditionalSaves: true });
  // Another writer (a process that crashed after its intent landed) lists z after this run read the object.
  await w.client.applyStatus(
    {
      apiVersion: KUSTOMIZE_API_VERSION,
      kind: 'Kustomization',
      metadata: { name: NAME, namespace: NS },
      status: { inventory: inventoryOf([ref('ConfigMap', 'z')]) },
    } as KubeObject,
    { fieldManager: 'mooring', force: true },
  );
  await w.put(configMap('z'));
  await runUpTo(run, 'apply');
  w.transport.requests.length = 0;
  await apply(run);
  assert.ok(
    sent(w.transport).includes(`GET /apis/${KUSTOMIZE_API_VERSION}/namespaces/${NS}/kustomizations/${NAME}`),
    'the stored status is read after the refused write',
  );
  assert.deepEqual(
    saved.map((s) => s.inventory),
    [['apps_a__ConfigMap', 'apps_z__ConfigMap']],
  );
  await prune(run);
  assert.deepEqual(w.live(), ['apps_a__ConfigMap'], 'z, listed only by the stored inventory, was pruned');
});

test('apply: an intent write that fails leaves status.inventory as stored, and nothing is applied', async () => {
  const w = await world();
  w.renders.answer = () => [configMap('a')];
  const { run } = await w.runOf({}, undefined, { conditionalSaves: true });
  await runUpTo(run, 'apply');
  w.transport.fail = (req) =>
    req.method === 'PATCH' && req.path.includes('/kustomizations/') && req.path.includes('/status')
      ? errorResponse(500, 'InternalError', 'etcdserver: request timed out')
      : undefined;
  await assert.rejects(apply(run), /request timed out/);
  // What the reconcile leaves in status.inventory is what the next one starts from (lastInventory).
  assert.equal(run.status.inventory, undefined);
  assert.deepEqual(w.live(), []);
});

test('apply: an unchanged revision writes nothing, saves no progress, and reads only its objects', async () => {
  const w = await world();
  const first = await w.runOf();
  await runUpTo(first.run, 'apply');
  await apply(first.run);
  const again = await w.runOf({}, [ref('ConfigMap', 'a')]);
  again.run.memory.knownVersions = first.run.memory.knownVersions;
  await runUpTo(again.run, 'apply');
  w.transport.requests.length = 0;
  await apply(again.run);
  assert.deepEqual(again.saved, []);
  // Discovery answers stay cached: only a stage that wrote a CRD makes them stale.
  assert.deepEqual(w.transport.requests, [`GET /api/v1/namespaces/${NS}/configmaps/a`]);
  assert.deepEqual(again.events, []);
  assert.equal(again.run.summary, '');
});

test('apply: with the managed-object watch, an unchanged revision sends nothing; an edit is read and put back', async () => {
  const w = await world();
  const versions = managedVersions(w);
  try {
    const first = await w.runOf();
    first.run.deps.managedVersions = versions;
    await runUpTo(first.run, 'apply');
    await apply(first.run);
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', namespace: NS, name: 'a' };
    const appliedAt = () => w.server.get('v1', 'ConfigMap', NS, 'a')?.metadata.resourceVersion;
    await until('the watch holds the applied version', () => versions.versionOf(cm) === appliedAt());

    const again = await w.runOf({}, [ref('ConfigMap', 'a')]);
    again.run.deps.managedVersions = versions;
    again.run.memory.knownVersions = first.run.memory.knownVersions;
    await runUpTo(again.run, 'apply');
    w.transport.requests.length = 0;
    await apply(again.run);
    assert.deepEqual(sent(w.transport), [], 'no read, no dry run: the watch holds the version we applied');
    assert.deepEqual(again.saved, []);
    assert.equal(again.run.summary, '');

    await w.put({ ...configMap('a'), data: { name: 'edited' } });
    const edited = appliedAt();
    await until('the watch saw the edit', () => versions.versionOf(cm) === edited);
    const third = await w.runOf({}, [ref('ConfigMap', 'a')]);
    third.run.deps.managedVersions = versions;
    third.run.memory.knownVersions = first.run.memory.knownVersions;
    await runUpTo(third.run, 'apply');
    w.transport.requests.length = 0;
    await apply(third.run);
    assert.ok(
      sent(w.transport).includes(`GET /api/v1/namespaces/${NS}/configmaps/a`),
      'the edited object is read',
    );
    assert.equal(third.run.summary, 'ConfigMap/apps/a configured');
    assert.deepEqual(w.server.get('v1', 'ConfigMap', NS, 'a')?.data, { name: 'a' });
  } finally {
    await versions.close();
  }
});

test('apply: an object the API server refuses fails the stage with nothing of it written or recorded', async () => {
  const w = await world();
  const bad = configMap('b');
  bad.data = { 'not a key!': 'x' };
  w.renders.answer = () => [configMap('a'), bad];
  const { run, saved } = await w.runOf({}, [ref('ConfigMap', 'old')]);
  await runUpTo(run, 'apply');
  await assert.rejects(
    apply(run),
    (err: unknown) =>
      err instanceof RetryableError &&
      err.reason === Reason.ReconciliationFailed &&
      /ConfigMap\/apps\/b/.test(err.message),
  );
  assert.deepEqual(saved, []);
  assert.deepEqual(w.live(), []);
  assert.deepEqual(run.status.inventory, inventoryOf([ref('ConfigMap', 'old')]));
});

test('stored inventory: entries another write left on the API server join the previous inventory, with one GET', async () => {
  const w = await world();
  const { run } = await w.runOf({}, [ref('ConfigMap', 'a'), ref('ConfigMap', 'b')]);
  // The informer's copy this run started from lags: it has only a.
  run.previous = inventoryOf([ref('ConfigMap', 'a')]);
  const added = await joinStoredInventory(run);
  assert.deepEqual(
    added.map((e) => e.id),
    ['apps_b__ConfigMap'],
  );
  assert.deepEqual(
    run.previous?.entries.map((e) => e.id),
    ['apps_a__ConfigMap', 'apps_b__ConfigMap'],
  );
  assert.deepEqual(await joinStoredInventory(run), []);
  assert.equal(w.transport.requests.filter((r) => r.includes('/kustomizations/')).length, 1);
});

// ---------------------------------------------------------------------------------------------
// prune

async function appliedRun(w: World, previous: ObjectRef[], spec: Partial<Kustomization['spec']> = {}) {
  const r = await w.runOf(spec, previous);
  await runUpTo(r.run, 'prune');
  w.transport.requests.length = 0;
  return r;
}

test('prune: deletes only what left the inventory, and never an object marked prune: disabled', async () => {
  const w = await world();
  w.renders.answer = () => [
    configMap('a'),
    configMap('b'),
    configMap('keep', { [PRUNE_ANNOTATION]: PRUNE_DISABLED }),
  ];
  await runUpTo((await w.runOf()).run, 'prune');
  assert.equal(PRUNE_ANNOTATION, 'kustomize.mooring.dev/prune');
  assert.deepEqual(w.live(), ['apps_a__ConfigMap', 'apps_b__ConfigMap', 'apps_keep__ConfigMap']);

  w.renders.answer = () => [configMap('a')];
  const { run, events } = await appliedRun(w, [
    ref('ConfigMap', 'a'),
    ref('ConfigMap', 'b'),
    ref('ConfigMap', 'keep'),
  ]);
  await prune(run);
  assert.deepEqual(w.live(), ['apps_a__ConfigMap', 'apps_keep__ConfigMap']);
  assert.deepEqual(
    w.transport.requests.filter((r) => r.startsWith('DELETE ')),
    [`DELETE /api/v1/namespaces/${NS}/configmaps/b`],
  );
  assert.deepEqual(run.status.inventory, inventoryOf([ref('ConfigMap', 'a')]));
  assert.deepEqual(
    events.map((e) => [e.reason, e.message]),
    [['Progressing', 'ConfigMap/apps/b deleted']],
  );
});

test('prune: an object someone took over (owner labels changed) is left alone', async () => {
  const w = await world();
  w.renders.answer = () => [configMap('a'), configMap('b')];
  await runUpTo((await w.runOf()).run, 'prune');
  await w.client.mergePatch(
    { apiVersion: 'v1', kind: 'ConfigMap', namespace: NS, name: 'b' },
    { metadata: { labels: { [KUSTOMIZE_NAME_LABEL]: 'someone-else' } } },
  );
  w.renders.answer = () => [configMap('a')];
  const { run } = await appliedRun(w, [ref('ConfigMap', 'a'), ref('ConfigMap', 'b')]);
  await prune(run);
  assert.ok(w.server.get('v1', 'ConfigMap', NS, 'b'));
  assert.deepEqual(run.status.inventory, inventoryOf([ref('ConfigMap', 'a')]));
});

test('prune: without spec.prune nothing is deleted and the inventory is what the revision declares', async () => {
  const w = await world();
  w.renders.answer = () => [configMap('a'), configMap('b')];
  await runUpTo((await w.runOf()).run, 'prune');
  w.renders.answer = () => [configMap('a')];
  const { run } = await appliedRun(w, [ref('ConfigMap', 'a'), ref('ConfigMap', 'b')], { prune: false });
  await prune(run);
  assert.deepEqual(w.live(), ['apps_a__ConfigMap', 'apps_b__ConfigMap']);
  assert.deepEqual(run.status.inventory, inventoryOf([ref('ConfigMap', 'a')]));
});

test('prune: a delete the API server refuses keeps the object in the inventory and fails with PruneFailed', async () => {
  const w = await world();
  w.renders.answer = () => [configMap('a'), configMap('b')];
  await runUpTo((await w.runOf()).run, 'prune');
  w.renders.answer = () => [configMap('a')];
  const { run } = await appliedRun(w, [ref('ConfigMap', 'a'), ref('ConfigMap', 'b')]);
  w.transport.fail = (req) =>
    req.method === 'DELETE' ? errorResponse(403, 'Forbidden', 'configmaps "b" is forbidden') : undefined;
  await assert.rejects(
    prune(run),
    (err: unknown) =>
      err instanceof RetryableError &&
      err.reason === Reason.PruneFailed &&
      err.message.startsWith('prune failed: ConfigMap/apps/b: '),
  );
  assert.deepEqual(run.status.inventory, inventoryOf([ref('ConfigMap', 'a'), ref('ConfigMap', 'b')]));
});

// ---------------------------------------------------------------------------------------------
// check health

const deployment = (name: string): Manifest => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, namespace: NS },
  spec: {
    selector: { matchLabels: { app: name } },
    template: {
      metadata: { labels: { app: name } },
      spec: { containers: [{ name, image: 'nginx' }] },
    },
  },
});

/**
 * A Deployment whose rollout is not what the fake did at once: the stored object and the copy the
 * apply returned (which the health wait judges first) both carry `status`.
 */
function rollOut(w: World, run: KustomizationRun, name: string, status: Record<string, unknown>) {
  setStatus(w, 'apps/v1', 'Deployment', name, status);
  const applied = run.changes?.find((c) => c.ref.kind === 'Deployment' && c.ref.name === name)?.live;
  if (applied) applied.status = structuredClone(status);
}

/** Changes a stored object's status in place, as a controller would (the fake rolls every Deployment out at once). */
function setStatus(
  w: World,
  apiVersion: string,
  kind: string,
  name: string,
  status: Record<string, unknown>,
) {
  const obj = w.server.get(apiVersion, kind, NS, name)!;
  obj.status = status;
}

test('check health: with wait, every applied object is checked and Healthy is True when all are ready', async () => {
  const w = await world();
  w.renders.answer = () => [configMap('a'), deployment('web')];
  const { run, saved, condition } = await w.runOf({ wait: true });
  await runUpTo(run, 'check health');
  saved.length = 0;
  w.transport.requests.length = 0;
  await checkHealth(run);
  assert.equal(condition(ConditionType.Healthy)?.status, 'True');
  // The fake rolls a Deployment out as it is applied: the apply's answer says so, and is believed.
  assert.deepEqual(w.transport.requests, [], 'no read: both objects were Current in the apply answer');
  assert.deepEqual(saved, [], 'a wait that ends at once writes no progress');
});

test('check health: an object judged healthy at the version the watch still holds is not read again; a new status is judged', async () => {
  const w = await world();
  w.renders.answer = () => [configMap('a'), deployment('web')];
  const versions = managedVersions(w);
  const memory = {
    knownVersions: new Map(),
    healthy: new Map(),
    remotes: new RemoteClusters(),
    lastInventory: new Map(),
  };
  const pass = async () => {
    const r = await w.runOf({ wait: true }, [ref('ConfigMap', 'a'), ref('Deployment', 'web', 'apps/v1')]);
    r.run.deps.managedVersions = versions;
    Object.assign(r.run.memory, memory);
    await runUpTo(r.run, 'check health');
    w.transport.requests.length = 0;
    return r;
  };
  const web = { apiVersion: 'apps/v1', kind: 'Deployment', namespace: NS, name: 'web' };
  const stored = () => w.server.get('apps/v1', 'Deployment', NS, 'web')?.metadata.resourceVersion;
  try {
    const first = await pass();
    await checkHealth(first.run);
    assert.equal(first.condition(ConditionType.Healthy)?.status, 'True');
    await until('the watch holds the applied version', () => versions.versionOf(web) === stored());

    const second = await pass();
    await checkHealth(second.run);
    assert.equal(second.condition(ConditionType.Healthy)?.status, 'True');
    assert.deepEqual(sent(w.transport), [], 'neither the apply nor the wait read anything');

    // The rollout fails later: the controller's status write, a version the memory does not vouch for.
    await w.client.applyStatus(
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'web', namespace: NS },
        status: {
          conditions: [
            { type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded', message: 'stuck' },
          ],
        },
      } as KubeObject,
      { fieldManager: 'kube-controller-manager', force: true },
    );
    const failedAt = stored();
    await until('the watch saw the status', () => versions.versionOf(web) === failedAt);
    const third = await pass();
    await assert.rejects(
      checkHealth(third.run),
      (err: unknown) =>
        err instanceof RetryableError && err.reason === Reason.HealthCheckFailed && /stuck/.test(err.message),
    );
  } finally {
    await versions.close();
  }
});

test('check health: a new revision is judged on what its apply returned, even while the watch still holds the healthy version', async () => {
  const w = await world();
  w.renders.answer = () => [deployment('web')];
  // A watch that lags: it still answers the version the Deployment was healthy at.
  let lagging: string | undefined;
  const versions = { client: w.client, versionOf: () => lagging, follow() {} } as unknown as ManagedVersions;
  const memory = {
    knownVersions: new Map(),
    healthy: new Map(),
    remotes: new RemoteClusters(),
    lastInventory: new Map(),
  };
  {
    const first = await w.runOf({ wait: true });
    first.run.deps.managedVersions = versions;
    Object.assign(first.run.memory, memory);
    await runUpTo(first.run, 'check health');
    await checkHealth(first.run);
    lagging = w.server.get('apps/v1', 'Deployment', NS, 'web')?.metadata.resourceVersion;

    w.renders.answer = () => [
      { ...deployment('web'), spec: { ...(deployment('web').spec as object), replicas: 3 } },
    ];
    const next = await w.runOf({ wait: true }, [ref('Deployment', 'web', 'apps/v1')]);
    next.run.deps.managedVersions = versions;
    Object.assign(next.run.memory, memory);
    await runUpTo(next.run, 'check health');
    assert.equal(next.run.summary, 'Deployment/apps/web configured');
    rollOut(w, next.run, 'web', {
      conditions: [
        { type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded', message: 'stuck' },
      ],
    });
    await assert.rejects(
      checkHealth(next.run),
      (err: unknown) => err instanceof RetryableError && err.reason === Reason.HealthCheckFailed,
    );
  }
});

test('check health: a wait longer than a second is shown as progress, once', async () => {
  const w = await world();
  w.renders.answer = () => [configMap('a'), deployment('web')];
  const { run, saved, condition } = await w.runOf({ wait: true });
  await runUpTo(run, 'check health');
  rollOut(w, run, 'web', { observedGeneration: 1, replicas: 1, updatedReplicas: 1, availableReplicas: 0 });
  saved.length = 0;
  w.clock.setTimeout(
    () =>
      setStatus(w, 'apps/v1', 'Deployment', 'web', {
        observedGeneration: 1,
        replicas: 1,
        updatedReplicas: 1,
        readyReplicas: 1,
        availableReplicas: 1,
        conditions: [{ type: 'Available', status: 'True' }],
      }),
    3_000,
  );
  await onFakeTime(w.clock, () => checkHealth(run));
  assert.equal(condition(ConditionType.Healthy)?.status, 'True');
  assert.deepEqual(
    saved.map((s) => s.message),
    ['waiting for 2 objects to become healthy'],
  );
});

test('check health: a Deployment that never becomes ready fails at the timeout, naming it', async () => {
  const w = await world();
  w.renders.answer = () => [configMap('a'), deployment('web')];
  const { run, condition } = await w.runOf({ wait: true, timeout: '1m' });
  await runUpTo(run, 'check health');
  rollOut(w, run, 'web', {
    observedGeneration: 1,
    replicas: 1,
    updatedReplicas: 1,
    readyReplicas: 0,
    availableReplicas: 0,
  });
  const started = w.clock.now();
  await assert.rejects(
    onFakeTime(w.clock, () => checkHealth(run)),
    (err: unknown) =>
      err instanceof RetryableError &&
      err.reason === Reason.HealthCheckFailed &&
      err.message.startsWith(
        `health check failed for revision '${REVISION}': timeout waiting for: Deployment/apps/web (InProgress: `,
      ),
  );
  assert.ok(w.clock.now() - started >= 60_000, 'waited the whole timeout, on the fake clock');
  assert.equal(condition(ConditionType.Healthy)?.status, 'False');
  assert.equal(condition(ConditionType.Healthy)?.reason, Reason.HealthCheckFailed);
  assert.match(condition(ConditionType.Healthy)?.message ?? '', /Deployment\/apps\/web/);
});

test('check health: a failed rollout ends the wait at once, saying which object failed and why', async () => {
  const w = await world();
  w.renders.answer = () => [deployment('web')];
  const { run } = await w.runOf({
    healthChecks: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }],
  });
  await runUpTo(run, 'check health');
  rollOut(w, run, 'web', {
    observedGeneration: 1,
    replicas: 1,
    conditions: [
      {
        type: 'Progressing',
        status: 'False',
        reason: 'ProgressDeadlineExceeded',
        message: 'ReplicaSet "web-1" has timed out progressing.',
      },
    ],
  });
  const started = w.clock.now();
  await assert.rejects(
    onFakeTime(w.clock, () => checkHealth(run)),
    (err: unknown) =>
      err instanceof RetryableError &&
      err.message ===
        `health check failed for revision '${REVISION}': Deployment/apps/web failed: ReplicaSet "web-1" has timed out progressing.`,
  );
  assert.equal(w.clock.now() - started, 250, 'settled within the first fake-clock step: no wait');
});

test('check health: nothing to check passes without a request', async () => {
  const w = await world();
  const { run, condition } = await w.runOf();
  await runUpTo(run, 'check health');
  w.transport.requests.length = 0;
  await checkHealth(run);
  assert.deepEqual(w.transport.requests, []);
  assert.equal(condition(ConditionType.Healthy), undefined);
});

// ---------------------------------------------------------------------------------------------
// record success

test('record success: lastAppliedRevision, the render in the history at the fake clock, requeue at the interval', async () => {
  const w = await world();
  await w.put(
    gitRepository('app', {
      artifact: artifactOf(REVISION, { 'org.opencontainers.image.revision': 'v1@sha1:abc' }),
    }),
  );
  const { run } = await w.runOf({ interval: '5m' });
  await runUpTo(run, 'record success');
  assert.deepEqual(recordSuccess(run), { requeueAfterMs: 300_000 });
  assert.equal(run.status.lastAppliedRevision, REVISION);
  assert.equal(run.status.lastAppliedOriginRevision, 'v1@sha1:abc');
  assert.equal(run.status.history?.length, 1);
  assert.equal(run.status.history?.[0]?.digest, 'sha256:1');
  assert.equal(run.status.history?.[0]?.lastReconciled, '2026-01-01T00:00:00Z');
  assert.equal(run.status.history?.[0]?.totalReconciliations, 1);
  w.clock.advance(60_000);
  recordSuccess(run);
  assert.equal(run.status.history?.length, 1, 'the same render counts again, no new entry');
  assert.equal(run.status.history?.[0]?.totalReconciliations, 2);
  assert.equal(run.status.history?.[0]?.lastReconciled, '2026-01-01T00:01:00Z');
});

test('the whole list: the reconciler applies the revision and reports what the controller makes Ready=True', async () => {
  const w = await world();
  const { run } = await w.runOf();
  const reconciler = kustomizationReconciler(run.deps);
  const result = await reconciler.reconcile(run.obj, run.ctx);
  assert.deepEqual(result, {
    message: `Applied revision: ${REVISION}`,
    revision: REVISION,
    requeueAfterMs: 600_000,
  });
  assert.equal(run.status.lastAppliedRevision, REVISION);
  assert.deepEqual(run.status.inventory, inventoryOf([ref('ConfigMap', 'a')]));
  assert.deepEqual(w.live(), ['apps_a__ConfigMap']);
});

test("docs/architecture.md's step table names the Kustomization's steps, in order", () => {
  const doc = readFileSync(
    fileURLToPath(new URL('../../../../docs/architecture.md', import.meta.url)),
    'utf8',
  );
  const line = doc.split('\n').find((l) => l.startsWith('| Kustomization |'));
  assert.ok(line, 'no row for Kustomization');
  const steps = line
    .split('|')[2]!
    .replace(/\([^)]*\)/g, '')
    .split('→')
    .map((s) => s.trim());
  assert.deepEqual(
    steps,
    KUSTOMIZATION_STEPS.map((s) => s.name),
  );
});
