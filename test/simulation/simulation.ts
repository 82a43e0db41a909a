/**
 * Deterministic simulation of the kustomize operator's reconcile loop: the real runtime
 * Controller, Informer, WorkQueue and KubeClient, and the real kustomizationReconciler (apply in
 * stages, inventory, prune, health, dependencies), against the in-memory API server of
 * fake-api-server.ts, on a fake clock, with faults from a seeded PRNG. One seed is one run, and
 * the same seed replays the same run: every request, timer and decision is the same.
 *
 * What is not under test: the source artifact fetch and the kustomize build. A RenderCache
 * stand-in hands the reconciler the manifests of a revision (labelled as the real render labels
 * them), and the simulation plays the source operator by writing GitRepository artifacts.
 *
 * Determinism. The sim makes no decision with Math.random or the wall clock. The code under test
 * does use them, so for the length of a run three globals are replaced and put back after it:
 * `Math.random` by a PRNG seeded from the run's seed (reconcile IDs, requeue and watch-timeout
 * jitter), `Date.now` by the simulated wall clock (history durations, health-check and recreate
 * deadlines), and `setTimeout`/`clearTimeout` by timers on the simulated clock (the health poll,
 * recreate and waitForTermination sleep on them; Node's internals keep their own timers). The
 * client's rate limiter is built with the real `Date.now` and a limit no run reaches, so it never
 * sleeps (simulation.test.ts's clock-step test of TokenBucket shows why it must not see simulated wall-clock steps). The
 * one real timer left, AbortSignal.timeout of the reconcile's `spec.timeout` (30 s at least),
 * cannot fire within a run.
 *
 * Each seed: 1–2 GitRepositories, 2–4 Kustomizations (some depending on others), 3–8 revisions per
 * repository; a chaos phase of 50–140 steps (0.5–6 s each) with pushes, fault weather (500s, 409s,
 * lost answers, slow requests and timeouts, refused, expired, dropped and stalled watches, watch
 * window compaction), operator crashes and graceful restarts, wall-clock steps and fast-forwards,
 * kubectl drift, reconcile requests, suspend, spec edits and Kustomization deletion and
 * re-creation; then a quiet phase with faults off until everything converges, and a quiet window
 * that must stay converged without a hot loop. Invariants are checked after every step.
 */
import { createHash } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import {
  FINALIZER,
  KUSTOMIZE_API_VERSION,
  KUSTOMIZE_NAME_LABEL,
  KUSTOMIZE_NAMESPACE_LABEL,
  type Kustomization,
  SOURCE_API_VERSION,
} from '@mooring/api';
import type { Manifest } from '@mooring/kustomize-operator/apply/object-policy';
import { inventoryId } from '@mooring/kustomize-operator/inventory';
import { kustomizationReconciler } from '@mooring/kustomize-operator/kustomization-reconciler';
import { RenderCache, type Rendered, type RenderInputs } from '@mooring/kustomize-operator/render';
import {
  type Clock,
  Controller,
  FakeClock,
  KubeClient,
  type MooringObject,
  type Reconciler,
  RetryableError,
  type RuntimeLogger,
  resourcePath,
  type TimerHandle,
  type TransportRequest,
} from '@mooring/runtime';
import { FakeApiServer, type Obj, resourceFor } from './fake-api-server.ts';
import { mix32, mulberry32, Rng } from './prng.ts';
import {
  type KustomizationSpec,
  makeScenario,
  NAMESPACES,
  type Revision,
  type Scenario,
  SOURCE_NAMESPACE,
} from './scenario.ts';
import { type FaultRates, NO_FAULTS, SimTransport } from './sim-transport.ts';

/** Captured at import, before any run replaces them. */
const REAL_DATE_NOW = Date.now;
const REAL_MATH_RANDOM = Math.random;
const REAL_SET_TIMEOUT = globalThis.setTimeout;
const REAL_CLEAR_TIMEOUT = globalThis.clearTimeout;

export const START_MS = Date.UTC(2025, 0, 1);
/** Quiet steps (5 s each) allowed from the end of the faults to convergence: 45 simulated minutes. */
export const MAX_QUIET_STEPS = 540;
const QUIET_STEP_MS = 5_000;
/** After convergence: this long with nothing happening, and it must stay converged. */
const WINDOW_MS = 12 * 60_000;
/** No Kustomization may be reconciled more often than this in any simulated minute. */
export const HOT_LOOP_PER_MINUTE = 60;

/**
 * Once a bug (fixed: the finalizer now retries): the Kustomization finalizer logs "could not delete every
 * object" when pruning part of the inventory fails (a transient 500 is enough) and removes the
 * finalizer anyway, so those objects stay on the cluster with no inventory listing them. Flux
 * returns the error instead, so the deletion is retried. Reported under this name so the suite
 * can hold every other invariant while it stands.
 */
export const KNOWN_FINALIZE_GIVES_UP = 'known:finalize-gives-up';

/**
 * Once a bug (fixed: start() returns when stopped): Controller.stop() while start() still waits for the
 * secondary informers leaves start() to go on and start the primary informer after the stop; that
 * list/watch loop then runs (and retries) for ever.
 */
export const KNOWN_STOP_DURING_START = 'known:stop-during-start';

/**
 * Once a bug (fixed: the stored inventory is read before a reconcile writes): a reconcile starts from the informer's cached
 * Kustomization, whose status.inventory can be older than the inventory the operator itself last
 * wrote (the watch is behind: stalled for up to watchTimeoutSeconds + 60 s, dropped, or its event
 * simply not delivered yet when the key runs again). The intent write then stores the stale
 * inventory plus what this pass writes, so objects applied in between drop out of it, and are
 * never pruned once a later revision removes them.
 */
export const KNOWN_STALE_INVENTORY = 'known:stale-inventory';

/**
 * Once a bug (fixed: performance.now()): the reconciler measures `lastReconciledDuration`
 * with Date.now(), the wall clock, so a wall-clock step backwards during a reconcile records a
 * negative duration. Flux measures it on the monotonic clock.
 */
export const KNOWN_NEGATIVE_DURATION = 'known:negative-duration';

/**
 * Violations of reported bugs that are still open: counted and shown, but they do not fail a
 * seed. None are open: the four `known:` bugs above are fixed, so every violation fails.
 */
const OPEN_BUGS = new Set<string>();
export const isKnown = (v: Violation) => OPEN_BUGS.has(v.invariant);

export interface Violation {
  invariant: string;
  step: number;
  /** Simulated time since the start, in ms. */
  atMs: number;
  message: string;
}

export interface SimResult {
  seed: number;
  violations: Violation[];
  chaosSteps: number;
  /** Quiet steps until every invariant of the end state held; undefined when it never did. */
  stepsToConverge: number | undefined;
  steps: number;
  requests: number;
  reconciles: number;
  restarts: number;
  pushes: number;
  maxReconcilesPerMinute: number;
  /** sha256 over every request and decision of the run: equal hashes, equal runs. */
  traceHash: string;
  trace: string[];
}

export interface SimOptions {
  /** Keep a readable trace (steps, requests, log lines, events) in the result. */
  trace?: boolean;
}

class SimClock implements Clock {
  readonly timers = new FakeClock(START_MS);
  /** Wall-clock steps (NTP corrections): `now()` moves, timers do not. */
  wallOffsetMs = 0;

  now(): number {
    return this.timers.now() + this.wallOffsetMs;
  }

  get monotonic(): number {
    return this.timers.now();
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    return this.timers.setTimeout(fn, ms);
  }

  clearTimeout(handle: TimerHandle): void {
    this.timers.clearTimeout(handle);
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return this.timers.sleep(ms, signal);
  }
}

interface Weather extends FaultRates {
  name: string;
  render: number;
}

const CALM: Weather = { ...NO_FAULTS, name: 'calm', render: 0 };
const LIGHT: Weather = {
  name: 'light',
  error: 0.01,
  conflict: 0.01,
  lost: 0.005,
  slow: 0.01,
  watchRefused: 0.05,
  watchGone: 0.05,
  watchDrop: 0.1,
  watchStall: 0.02,
  render: 0.01,
};
const STORM: Weather = {
  name: 'storm',
  error: 0.1,
  conflict: 0.08,
  lost: 0.04,
  slow: 0.05,
  watchRefused: 0.3,
  watchGone: 0.2,
  watchDrop: 0.4,
  watchStall: 0.05,
  render: 0.05,
};

/** A RenderCache that hands out a revision's manifests, as the real render labels them. */
class SimRenderCache extends RenderCache {
  readonly #content: (revision: string, path: string) => Manifest[] | undefined;
  readonly #onRender: (inputs: RenderInputs) => void;
  readonly #fail: () => boolean;

  constructor(
    content: (revision: string, path: string) => Manifest[] | undefined,
    onRender: (inputs: RenderInputs) => void,
    fail: () => boolean,
  ) {
    super(1);
    this.#content = content;
    this.#onRender = onRender;
    this.#fail = fail;
  }

  override get(inputs: RenderInputs, _signal: AbortSignal): Promise<Rendered> {
    this.#onRender(inputs);
    const { revision } = inputs.artifact;
    if (this.#fail())
      return Promise.reject(
        new RetryableError(
          'ArtifactFailed',
          `fetching artifact of revision '${revision}': connection refused`,
        ),
      );
    const manifests = this.#content(revision, inputs.path);
    if (!manifests) return Promise.reject(new Error(`simulation: no content for ${revision} ${inputs.path}`));
    const labelled = structuredClone(manifests).map((m) => {
      m.metadata.labels = {
        ...m.metadata.labels,
        [KUSTOMIZE_NAME_LABEL]: inputs.owner.name,
        [KUSTOMIZE_NAMESPACE_LABEL]: inputs.owner.namespace,
      };
      return m;
    });
    const digest = `sha256:${createHash('sha256').update(JSON.stringify(labelled)).digest('hex')}`;
    return Promise.resolve({ manifests: labelled, digest });
  }
}

interface Proc {
  id: number;
  transport: SimTransport;
  controller: Controller<MooringObject>;
  /** Per Kustomization, the revision its reconcile in flight (or last) rendered in this process. */
  renders: Map<string, string>;
  stop?: Promise<void>;
  stopRequestedAt?: number;
  /** Controller.start() has returned. */
  started: boolean;
  /** Controller.stop() was called before start() returned. */
  stoppedDuringStart: boolean;
  /** Requests after death counted when `stop` resolved; any more later are a zombie's. */
  deadRequestsAtStop?: number;
}

interface KState {
  spec: KustomizationSpec;
  key: string;
  /** Whether the simulated user wants it to exist. */
  exists: boolean;
  suspended: boolean;
  wait: boolean;
  requests: number;
  /** Its finalize logged that some objects could not be deleted, and removed the finalizer anyway. */
  finalizeGaveUp: boolean;
  /** Object ids a known bug lost track of (orphaned by the finalizer, dropped from the inventory). */
  knownLost: Map<string, string>;
}

const idOf = (o: { apiVersion: string; kind: string; metadata: { namespace?: string; name?: string } }) =>
  inventoryId({
    apiVersion: o.apiVersion,
    kind: o.kind,
    namespace: o.metadata.namespace ?? '',
    name: o.metadata.name ?? '',
  });

/** `want` holds in `have`: objects key by key, lists element by element, the rest equal. */
function subset(want: unknown, have: unknown): boolean {
  if (Array.isArray(want))
    return Array.isArray(have) && want.length === have.length && want.every((w, i) => subset(w, have[i]));
  if (typeof want === 'object' && want !== null)
    return (
      typeof have === 'object' &&
      have !== null &&
      Object.entries(want).every(([k, v]) => subset(v, (have as Record<string, unknown>)[k]))
    );
  return want === have;
}

export class Simulation {
  readonly seed: number;
  readonly scenario: Scenario;
  readonly #trace: boolean;
  readonly #scen: Rng;
  readonly #faults: Rng;
  readonly #clock = new SimClock();
  readonly server: FakeApiServer;
  readonly #hash = createHash('sha256');
  readonly #lines: string[] = [];
  readonly violations: Violation[] = [];
  readonly #reported = new Set<string>();
  readonly #revisions = new Map<string, { source: string; rev: Revision }>();
  readonly #pushed = new Map<string, number>();
  readonly #k = new Map<string, KState>();
  readonly #reconcileTimes = new Map<string, number[]>();
  readonly #procs: Proc[] = [];
  #weather: Weather = CALM;
  #current: Proc | undefined;
  #stopping: Proc | undefined;
  #step = 0;
  #restarts = 0;
  #pushes = 0;
  #reconciles = 0;
  #maxPerMinute = 0;
  #chaos = true;
  #windowCount: ((key: string) => void) | undefined;

  constructor(seed: number, options: SimOptions = {}) {
    this.seed = seed;
    this.#trace = !!options.trace;
    this.#scen = new Rng(mix32(seed, 1));
    this.#faults = new Rng(mix32(seed, 2));
    this.scenario = makeScenario(this.#scen);
    this.server = new FakeApiServer({ now: () => this.#clock.now(), watchWindow: this.scenario.watchWindow });
    for (const [source, list] of this.scenario.revisions)
      for (const rev of list) this.#revisions.set(rev.revision, { source, rev });
    for (const spec of this.scenario.kustomizations) {
      const key = `${spec.namespace}/${spec.name}`;
      this.#k.set(key, {
        spec,
        key,
        exists: true,
        suspended: false,
        wait: spec.wait,
        requests: 0,
        finalizeGaveUp: false,
        knownLost: new Map(),
      });
    }
  }

  // -------------------------------------------------------------------------------------------
  // Bookkeeping

  #note(line: string): void {
    this.#hash.update(line);
    this.#hash.update('\n');
    if (this.#trace) this.#lines.push(`${this.#stamp()} ${line}`);
  }

  #traceOnly(line: string): void {
    if (this.#trace) this.#lines.push(`${this.#stamp()} ${line}`);
  }

  #stamp(): string {
    return `[step ${this.#step} t=${((this.#clock.monotonic - START_MS) / 1000).toFixed(3)}s]`;
  }

  #violate(invariant: string, message: string, dedupe = `${invariant}:${message}`): void {
    if (this.#reported.has(dedupe)) return;
    this.#reported.add(dedupe);
    const v = { invariant, step: this.#step, atMs: this.#clock.monotonic - START_MS, message };
    this.violations.push(v);
    this.#note(`VIOLATION ${invariant}: ${message}`);
  }

  #logger(bindings: Record<string, unknown> = {}): RuntimeLogger {
    const line = (level: string) => (obj: object, msg?: string) => {
      // The one log line that tells a finalize pruned only part of the inventory and went on.
      if (msg === 'could not delete every object') {
        const st = this.#k.get(`${bindings.namespace}/${bindings.name}`);
        if (st) st.finalizeGaveUp = true;
      }
      this.#traceOnly(`log ${level} ${msg ?? ''} ${JSON.stringify({ ...bindings, ...obj })}`);
    };
    return {
      debug: () => {},
      info: line('info'),
      warn: line('warn'),
      error: line('error'),
      child: (more) => this.#logger({ ...bindings, ...more }),
    };
  }

  #content(revision: string, path: string): Manifest[] | undefined {
    return this.#revisions.get(revision)?.rev.paths.get(path)?.manifests;
  }

  /** What a revision declares for a Kustomization, by inventory id. */
  #declared(spec: KustomizationSpec, revision: string): Map<string, Manifest> {
    const out = new Map<string, Manifest>();
    for (const m of this.#content(revision, spec.path) ?? []) {
      const namespace = m.kind === 'Namespace' ? '' : (m.metadata.namespace ?? spec.namespace);
      out.set(
        inventoryId({ apiVersion: m.apiVersion, kind: m.kind, namespace, name: m.metadata.name ?? '' }),
        m,
      );
    }
    return out;
  }

  #finalRevision(source: string): Revision | undefined {
    const i = this.#pushed.get(source);
    return i === undefined ? undefined : this.scenario.revisions.get(source)![i];
  }

  #liveK(st: KState): Kustomization | undefined {
    return this.server.get(KUSTOMIZE_API_VERSION, 'Kustomization', st.spec.namespace, st.spec.name) as
      | Kustomization
      | undefined;
  }

  // -------------------------------------------------------------------------------------------
  // The simulated user and source operator (straight to the store, no faults)

  #user(method: 'PATCH' | 'DELETE', path: string, body: unknown, contentType?: string): Obj | undefined {
    const res = this.server.handle({
      method,
      path,
      headers: contentType ? { 'Content-Type': contentType } : {},
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (res.statusCode === 404 && method === 'DELETE') return undefined;
    if (res.statusCode >= 300) throw new Error(`simulation: ${method} ${path} failed: ${res.body}`);
    return JSON.parse(res.body) as Obj;
  }

  #userApply(obj: Manifest, manager = 'sim-user', sub?: string): void {
    const res = resourceFor(obj.apiVersion, obj.kind)!;
    const path = resourcePath(res, obj.metadata.namespace, obj.metadata.name, sub);
    this.#user('PATCH', `${path}?fieldManager=${manager}&force=true`, obj, 'application/apply-patch+yaml');
  }

  #applyKustomization(st: KState): void {
    const { spec } = st;
    this.#userApply({
      apiVersion: KUSTOMIZE_API_VERSION,
      kind: 'Kustomization',
      metadata: { name: spec.name, namespace: spec.namespace },
      spec: {
        sourceRef: { kind: 'GitRepository', name: spec.source, namespace: SOURCE_NAMESPACE },
        path: spec.path,
        interval: spec.interval,
        prune: true,
        wait: st.wait,
        ...(spec.dependsOn.length ? { dependsOn: spec.dependsOn } : {}),
        ...(spec.deletionPolicy ? { deletionPolicy: spec.deletionPolicy } : {}),
        ...(st.suspended ? { suspend: true } : {}),
      },
    });
  }

  #push(source: string, index: number): void {
    const rev = this.scenario.revisions.get(source)![index]!;
    this.#pushed.set(source, index);
    this.#pushes++;
    this.#note(`push ${source} #${index} ${rev.revision}`);
    this.#userApply(
      {
        apiVersion: SOURCE_API_VERSION,
        kind: 'GitRepository',
        metadata: { name: source, namespace: SOURCE_NAMESPACE },
        status: {
          observedGeneration: 1,
          conditions: [
            {
              type: 'Ready',
              status: 'True',
              reason: 'Succeeded',
              message: `stored artifact for revision '${rev.revision}'`,
              observedGeneration: 1,
              lastTransitionTime: new Date(this.#clock.now()).toISOString().replace(/\.\d+Z$/, 'Z'),
            },
          ],
          artifact: {
            path: `gitrepository/${SOURCE_NAMESPACE}/${source}/${rev.digest.slice(7)}.tar.gz`,
            url: `http://source.sim/gitrepository/${SOURCE_NAMESPACE}/${source}/${rev.digest.slice(7)}.tar.gz`,
            revision: rev.revision,
            digest: rev.digest,
            lastUpdateTime: new Date(this.#clock.now()).toISOString().replace(/\.\d+Z$/, 'Z'),
            size: 1024,
          },
        },
      },
      'source-controller',
      'status',
    );
  }

  #setup(): void {
    for (const ns of NAMESPACES)
      this.#userApply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    for (const source of this.scenario.sources)
      this.#userApply({
        apiVersion: SOURCE_API_VERSION,
        kind: 'GitRepository',
        metadata: { name: source, namespace: SOURCE_NAMESPACE },
        spec: { url: `https://git.example/${source}`, interval: '1m', ref: { branch: 'main' } },
      });
    for (const st of this.#k.values()) this.#applyKustomization(st);
  }

  // -------------------------------------------------------------------------------------------
  // Operator processes

  #startProcess(): void {
    const id = this.#procs.length + 1;
    const renders = new Map<string, string>();
    const proc = { id, renders, started: false, stoppedDuringStart: false } as Proc;
    proc.transport = new SimTransport(`p${id}`, this.server, this.#clock, this.#faults, () => this.#weather, {
      beforeHandle: (req) => this.#checkDelete(proc, req),
      record: (line) => this.#note(`p${id} ${line}`),
    });
    // The rate limiter keeps the real Date.now: a limit no run reaches, so it never sleeps.
    const patched = Date.now;
    Date.now = REAL_DATE_NOW;
    let client: KubeClient;
    try {
      client = new KubeClient(proc.transport, { qps: 1e9, burst: 1e9, userAgent: 'mooring/simulation' });
    } finally {
      Date.now = patched;
    }
    const renderCache = new SimRenderCache(
      (revision, path) => this.#content(revision, path),
      (inputs) => renders.set(`${inputs.owner.namespace}/${inputs.owner.name}`, inputs.artifact.revision),
      () => this.#faults.chance(this.#weather.render),
    );
    const reconciler = kustomizationReconciler({
      client,
      renderCache,
      noCrossNamespaceRefs: false,
      defaultServiceAccount: undefined,
      requeueDependencyMs: this.scenario.requeueDependencyMs,
      concurrentApplies: this.scenario.concurrentApplies,
      // Revisions here may drop most of a path; convergence, not the deletion budget, is under test.
      defaultDeletionBudget: '100%',
    });
    const counted: Reconciler<Kustomization> = {
      ...reconciler,
      reconcile: (obj, ctx) => {
        this.#counted(obj, 'reconcile');
        return reconciler.reconcile(obj, ctx);
      },
      finalize: (obj, ctx) => {
        this.#counted(obj, 'finalize');
        return reconciler.finalize!(obj, ctx);
      },
    };
    proc.controller = new Controller<MooringObject>(counted as unknown as Reconciler<MooringObject>, {
      client,
      concurrent: this.scenario.concurrent,
      clock: this.#clock,
      log: this.#logger({ process: id }),
      reportingController: 'kustomize-controller',
      events: {
        record: (obj, e) =>
          this.#traceOnly(`event ${obj.metadata.namespace}/${obj.metadata.name} ${e.reason}: ${e.message}`),
      },
    });
    this.#procs.push(proc);
    this.#current = proc;
    this.#note(`process p${id} starts`);
    proc.controller
      .start()
      .then(() => {
        proc.started = true;
      })
      .catch((err: Error) => this.#violate('sim-error', `p${id} start failed: ${err.message}`));
  }

  #counted(obj: Kustomization, what: string): void {
    const key = `${obj.metadata.namespace}/${obj.metadata.name}`;
    const st = this.#k.get(key);
    const stored = st && this.#liveK(st);
    if (st && stored && stored.metadata.resourceVersion !== obj.metadata.resourceVersion) {
      const cached = new Set(obj.status?.inventory?.entries.map((e) => e.id) ?? []);
      const missing = (stored.status?.inventory?.entries ?? [])
        .filter((e) => !cached.has(e.id))
        .map((e) => e.id);
      for (const id of missing) st.knownLost.set(id, KNOWN_STALE_INVENTORY);
      this.#note(
        `${what} ${key} starts from a stale cache (rv ${obj.metadata.resourceVersion} < ${stored.metadata.resourceVersion}); stored inventory has ${missing.length} entries more`,
      );
    }
    this.#reconciles++;
    const times = this.#reconcileTimes.get(key) ?? [];
    this.#reconcileTimes.set(key, times);
    times.push(this.#clock.monotonic);
    this.#windowCount?.(key);
    this.#note(`${what} ${key} gen ${obj.metadata.generation}`);
  }

  #afterStop(proc: Proc): void {
    proc.deadRequestsAtStop = proc.transport.afterDeath;
    this.#note(`process p${proc.id} stopped`);
  }

  #crash(): void {
    const proc = this.#current!;
    this.#current = undefined;
    this.#restarts++;
    this.#note(`process p${proc.id} crashes`);
    proc.transport.kill(() => this.#faults.chance(0.5));
    proc.stopRequestedAt = this.#clock.monotonic;
    proc.stoppedDuringStart = !proc.started;
    proc.stop = proc.controller.stop(0).then(() => this.#afterStop(proc));
    this.#startProcess();
  }

  #gracefulRestart(): void {
    const proc = this.#current!;
    this.#current = undefined;
    this.#stopping = proc;
    this.#restarts++;
    const grace = this.#scen.int(0, 30_000);
    this.#note(`process p${proc.id} stops gracefully (grace ${grace} ms)`);
    proc.stopRequestedAt = this.#clock.monotonic;
    proc.stoppedDuringStart = !proc.started;
    proc.stop = proc.controller.stop(grace).then(() => {
      proc.transport.kill(() => false);
      this.#afterStop(proc);
      this.#stopping = undefined;
      if (!this.#current) this.#startProcess();
    });
  }

  // -------------------------------------------------------------------------------------------
  // Invariants

  /** A process deletes an object of a Kustomization: it must not be one the revision it applies declares. */
  #checkDelete(proc: Proc, req: TransportRequest): void {
    if (req.method !== 'DELETE') return;
    const obj = this.server.objectAt(req.path);
    const owner = obj?.metadata.labels?.[KUSTOMIZE_NAME_LABEL];
    if (!obj || !owner) return;
    const key = `${obj.metadata.labels?.[KUSTOMIZE_NAMESPACE_LABEL]}/${owner}`;
    const st = this.#k.get(key);
    const live = st && this.#liveK(st);
    if (!st || !live || live.metadata.deletionTimestamp) return;
    const revision = proc.renders.get(key);
    const id = idOf(obj);
    if (!revision)
      this.#violate('deleted-declared', `p${proc.id} deleted ${id} of ${key} before rendering anything`);
    else if (this.#declared(st.spec, revision).has(id))
      this.#violate(
        'deleted-declared',
        `p${proc.id} deleted ${id} while ${key} applies ${revision}, which declares it`,
      );
  }

  #checkStep(): void {
    // Every object labelled for a Kustomization is in its stored inventory.
    for (const obj of this.server.objects.values()) {
      const owner = obj.metadata.labels?.[KUSTOMIZE_NAME_LABEL];
      if (!owner) continue;
      const key = `${obj.metadata.labels?.[KUSTOMIZE_NAMESPACE_LABEL]}/${owner}`;
      const id = idOf(obj);
      const st = this.#k.get(key);
      const live = st && this.#liveK(st);
      if (!live) {
        if (st?.finalizeGaveUp) st.knownLost.set(id, KNOWN_FINALIZE_GIVES_UP);
        const known = st?.knownLost.get(id);
        this.#violate(
          known ?? 'orphaned',
          `${id} is labelled for ${key}, which no longer exists${known === KNOWN_FINALIZE_GIVES_UP ? ' (its finalize failed to delete it and went on)' : ''}`,
          `orphaned:${id}`,
        );
        continue;
      }
      if (!live.status?.inventory?.entries.some((e) => e.id === id)) {
        const known = st?.knownLost.get(id);
        this.#violate(
          known ?? 'inventory-covers',
          `${id} is on the cluster, labelled for ${key}, but not in its inventory (${live.status?.inventory?.entries.length ?? 'no'} entries)`,
          `inventory:${id}`,
        );
      }
    }
    // An object a known bug lost track of stays attributed to it until it is gone from the cluster.
    for (const st of this.#k.values()) {
      if (st.knownLost.size === 0) continue;
      const present = this.#labelled(st.key);
      for (const id of st.knownLost.keys()) if (!present.has(id)) st.knownLost.delete(id);
    }
    // Status history durations are durations: never negative, whatever the wall clock does.
    for (const st of this.#k.values()) {
      for (const h of this.#liveK(st)?.status?.history ?? [])
        if (h.lastReconciledDuration.startsWith('-'))
          this.#violate(
            KNOWN_NEGATIVE_DURATION,
            `${st.key}: status.history lastReconciledDuration ${h.lastReconciledDuration}`,
            `duration:${st.key}`,
          );
    }
    // No hot loop: reconciles per Kustomization in the last simulated minute.
    const now = this.#clock.monotonic;
    for (const [key, times] of this.#reconcileTimes) {
      while (times.length && times[0]! < now - 60_000) times.shift();
      if (times.length > this.#maxPerMinute) this.#maxPerMinute = times.length;
      if (times.length > HOT_LOOP_PER_MINUTE)
        this.#violate(
          'hot-loop',
          `${key} reconciled ${times.length} times in one simulated minute`,
          `hot:${key}`,
        );
    }
    // A stopped process makes no more requests; a stop finishes.
    for (const proc of this.#procs) {
      if (proc.deadRequestsAtStop !== undefined && proc.transport.afterDeath > proc.deadRequestsAtStop)
        this.#violate(
          proc.stoppedDuringStart ? KNOWN_STOP_DURING_START : 'zombie',
          `p${proc.id} made ${proc.transport.afterDeath - proc.deadRequestsAtStop} requests after Controller.stop() returned`,
          `zombie:${proc.id}`,
        );
      if (
        proc.deadRequestsAtStop === undefined &&
        proc.stopRequestedAt !== undefined &&
        now - proc.stopRequestedAt > 5 * 60_000
      )
        this.#violate(
          'stop-hang',
          `p${proc.id}: Controller.stop() has not returned after 5 simulated minutes`,
          `stop:${proc.id}`,
        );
    }
  }

  /** Why this Kustomization is not expected to end Ready at its final revision, or undefined. */
  #whyNotReady(st: KState, seen = new Set<string>()): string | undefined {
    if (!st.exists) return 'deleted';
    const rev = this.#finalRevision(st.spec.source);
    if (!rev) return 'no artifact';
    // Dependencies are checked before anything is applied, so a dependency not ready comes first.
    seen.add(st.key);
    for (const d of st.spec.dependsOn) {
      const key = `${d.namespace}/${d.name}`;
      const dep = this.#k.get(key);
      if (!dep?.exists) return `dependency ${key} is deleted`;
      if (seen.has(key)) continue;
      const why = this.#whyNotReady(dep, seen);
      if (why) return `dependency ${key}: ${why}`;
    }
    return rev.paths.get(st.spec.path)?.invalid;
  }

  /** Ids of the objects on the cluster labelled for one Kustomization. */
  #labelled(key: string): Set<string> {
    const out = new Set<string>();
    for (const obj of this.server.objects.values()) {
      const owner = obj.metadata.labels?.[KUSTOMIZE_NAME_LABEL];
      if (owner && `${obj.metadata.labels?.[KUSTOMIZE_NAMESPACE_LABEL]}/${owner}` === key) out.add(idOf(obj));
    }
    return out;
  }

  /**
   * What the end state still lacks: `failing` must be empty to converge; `known` are the gaps a
   * known bug left (objects it lost track of), reported but not waited for.
   */
  unmet(): { failing: string[]; known: string[] } {
    const out: string[] = [];
    const known: string[] = [];
    for (const st of this.#k.values()) {
      const live = this.#liveK(st);
      const all = this.#labelled(st.key);
      const mine = new Set([...all].filter((id) => !st.knownLost.has(id)));
      for (const id of all)
        if (st.knownLost.has(id)) known.push(`${st.key}: ${id} (${st.knownLost.get(id)})`);
      if (!st.exists) {
        if (live)
          out.push(
            `${st.key} is deleted but still there (finalizers ${live.metadata.finalizers?.join(',')})`,
          );
        if (mine.size) out.push(`${st.key} is deleted but its objects remain: ${[...mine].join(', ')}`);
        continue;
      }
      if (!live) {
        out.push(`${st.key} is missing`);
        continue;
      }
      const status = live.status;
      const ready = status?.conditions?.find((c) => c.type === 'Ready');
      if (ready?.observedGeneration !== live.metadata.generation)
        out.push(
          `${st.key}: Ready is for generation ${ready?.observedGeneration} of ${live.metadata.generation}`,
        );
      if (!live.metadata.finalizers?.includes(FINALIZER)) out.push(`${st.key}: no finalizer`);
      const why = this.#whyNotReady(st);
      const rev = this.#finalRevision(st.spec.source)!;
      if (!why && status?.observedGeneration !== live.metadata.generation)
        out.push(
          `${st.key}: observedGeneration ${status?.observedGeneration} of ${live.metadata.generation}`,
        );
      if (why) {
        if (ready?.status !== 'False') out.push(`${st.key}: Ready=${ready?.status}, expected False (${why})`);
        continue;
      }
      if (ready?.status !== 'True' || ready.message !== `Applied revision: ${rev.revision}`)
        out.push(
          `${st.key}: Ready=${ready?.status} ${ready?.reason}: ${ready?.message}; expected True at ${rev.revision}`,
        );
      if (status?.lastAppliedRevision !== rev.revision)
        out.push(`${st.key}: lastAppliedRevision ${status?.lastAppliedRevision}, expected ${rev.revision}`);
      const declared = this.#declared(st.spec, rev.revision);
      for (const [id, m] of declared) {
        const obj = this.server.get(
          m.apiVersion,
          m.kind,
          m.kind === 'Namespace' ? undefined : (m.metadata.namespace ?? st.spec.namespace),
          m.metadata.name ?? '',
        );
        if (!obj) {
          out.push(`${st.key}: ${id} is declared but not on the cluster`);
          continue;
        }
        const labels = {
          ...m.metadata.labels,
          [KUSTOMIZE_NAME_LABEL]: st.spec.name,
          [KUSTOMIZE_NAMESPACE_LABEL]: st.spec.namespace,
        };
        if (!isDeepStrictEqual(obj.metadata.labels ?? {}, labels))
          out.push(
            `${st.key}: ${id} labels ${JSON.stringify(obj.metadata.labels)} differ from ${JSON.stringify(labels)}`,
          );
        if ('data' in m && !isDeepStrictEqual(obj.data, m.data))
          out.push(
            `${st.key}: ${id} data ${JSON.stringify(obj.data)} differs from ${JSON.stringify(m.data)}`,
          );
        if ('spec' in m && !subset(m.spec, obj.spec))
          out.push(
            `${st.key}: ${id} spec ${JSON.stringify(obj.spec)} does not hold ${JSON.stringify(m.spec)}`,
          );
      }
      const extra = [...mine].filter((id) => !declared.has(id));
      if (extra.length) out.push(`${st.key}: objects not in ${rev.revision} remain: ${extra.join(', ')}`);
    }
    return { failing: out, known };
  }

  // -------------------------------------------------------------------------------------------
  // The run

  async #advance(ms: number): Promise<void> {
    await this.#clock.timers.advanceAsync(ms);
  }

  #chaosStep(): void {
    const r = this.#scen;
    for (const source of this.scenario.sources) {
      const next = (this.#pushed.get(source) ?? -1) + 1;
      const list = this.scenario.revisions.get(source)!;
      if (next < list.length && (next === 0 ? r.chance(0.5) : r.chance(0.06))) this.#push(source, next);
    }
    if (r.chance(0.04)) {
      const roll = r.next();
      this.#weather = roll < 0.35 ? CALM : roll < 0.75 ? LIGHT : STORM;
      this.#note(`weather ${this.#weather.name}`);
    }
    if (this.#current && r.chance(0.008)) this.#crash();
    else if (this.#current && !this.#stopping && r.chance(0.004)) this.#gracefulRestart();
    if (r.chance(0.01)) {
      this.server.compact();
      this.#note('watch window compacted');
    }
    if (r.chance(0.004)) {
      const jump = r.pick([-1, 1]) * r.int(10_000, 2 * 3_600_000);
      this.#clock.wallOffsetMs += jump;
      this.#note(`wall clock steps ${jump} ms`);
    }
    const ks = [...this.#k.values()];
    if (r.chance(0.015)) this.#drift();
    if (r.chance(0.01)) {
      const st = r.pick(ks);
      if (st.exists && this.#liveK(st)) {
        st.requests++;
        const at = `sim-${this.#step}-${st.requests}`;
        this.#note(`request reconcile of ${st.key}`);
        this.#user(
          'PATCH',
          `${resourcePath(resourceFor(KUSTOMIZE_API_VERSION, 'Kustomization')!, st.spec.namespace, st.spec.name)}?fieldManager=sim-user`,
          { metadata: { annotations: { 'reconcile.mooring.dev/requestedAt': at } } },
          'application/merge-patch+json',
        );
      }
    }
    if (r.chance(0.006)) {
      const st = r.pick(ks);
      if (st.exists) {
        if (r.chance(0.5)) st.suspended = !st.suspended;
        else st.wait = !st.wait;
        this.#note(`edit ${st.key}: suspend ${st.suspended}, wait ${st.wait}`);
        this.#applyKustomization(st);
      }
    }
    if (r.chance(0.003)) {
      const st = r.pick(ks);
      if (st.exists) {
        // Deleting a suspended Kustomization leaves its objects, by design (as Flux): resume it first.
        if (st.suspended) {
          st.suspended = false;
          this.#applyKustomization(st);
        }
        st.exists = false;
        this.#note(`delete ${st.key}`);
        this.#user(
          'DELETE',
          resourcePath(resourceFor(KUSTOMIZE_API_VERSION, 'Kustomization')!, st.spec.namespace, st.spec.name),
          undefined,
        );
      }
    }
    if (r.chance(0.01)) {
      const st = r.pick(ks);
      if (!st.exists && !this.#liveK(st)) {
        st.exists = true;
        st.suspended = false;
        st.finalizeGaveUp = false;
        this.#note(`re-create ${st.key}`);
        this.#applyKustomization(st);
      }
    }
  }

  /** kubectl edits an applied object behind Git's back. */
  #drift(): void {
    const r = this.#scen;
    const candidates = [...this.server.objects.values()].filter(
      (o) => o.metadata.labels?.[KUSTOMIZE_NAME_LABEL] && !o.metadata.deletionTimestamp,
    );
    if (!candidates.length) return;
    const obj = r.pick(candidates);
    const patches: unknown[] = [{ metadata: { labels: { drifted: 'true' } } }];
    if (obj.kind === 'ConfigMap') patches.push({ data: { version: 'edited' } }, { data: { extra: 'added' } });
    if (obj.kind === 'Deployment') patches.push({ spec: { replicas: 7 } });
    const patch = r.pick(patches);
    const res = resourceFor(obj.apiVersion, obj.kind)!;
    this.#note(`drift ${idOf(obj)} ${JSON.stringify(patch)}`);
    this.#user(
      'PATCH',
      `${resourcePath(res, obj.metadata.namespace, obj.metadata.name)}?fieldManager=kubectl-edit`,
      patch,
      'application/merge-patch+json',
    );
  }

  async run(): Promise<SimResult> {
    this.#setup();
    this.#startProcess();
    let stepsToConverge: number | undefined;
    const steps = this.scenario.chaosSteps;
    for (this.#step = 1; this.#step <= steps; this.#step++) {
      this.#chaosStep();
      let ms = this.#scen.int(500, 6_000);
      if (this.#scen.chance(0.004)) {
        ms += this.#scen.int(60_000, 15 * 60_000);
        this.#note(`fast-forward ${ms} ms`);
      }
      await this.#advance(ms);
      this.#checkStep();
      if (this.#budgetExceeded()) return this.#result(undefined);
    }
    // Quiet: faults stop, the user resumes what is suspended and Git holds its final revisions.
    this.#chaos = false;
    this.#weather = CALM;
    this.#note('faults stop');
    for (const st of this.#k.values()) {
      if (st.exists && st.suspended) {
        st.suspended = false;
        this.#applyKustomization(st);
      }
    }
    for (const source of this.scenario.sources) {
      const last = this.scenario.revisions.get(source)!.length - 1;
      if (this.#pushed.get(source) !== last) this.#push(source, last);
    }
    for (let q = 1; q <= MAX_QUIET_STEPS; q++) {
      this.#step++;
      if (!this.#current && !this.#stopping) this.#startProcess();
      await this.#advance(QUIET_STEP_MS);
      this.#checkStep();
      if (this.#budgetExceeded()) return this.#result(undefined);
      if (this.#current && this.unmet().failing.length === 0) {
        stepsToConverge = q;
        break;
      }
    }
    if (stepsToConverge === undefined) {
      this.#violate(
        'converge',
        `not converged ${(MAX_QUIET_STEPS * QUIET_STEP_MS) / 60_000} simulated minutes after the faults stopped: ${this.unmet().failing.join('; ')}`,
      );
      return this.#result(undefined);
    }
    this.#note(`converged after ${stepsToConverge} quiet steps`);
    // Then nothing happens for a while: it stays converged, and nothing reconciles in a loop.
    const before = this.#reconciles;
    const all = new Map<string, number>();
    const count = (key: string) => all.set(key, (all.get(key) ?? 0) + 1);
    this.#windowCount = count;
    for (let t = 0; t < WINDOW_MS; t += 30_000) {
      this.#step++;
      await this.#advance(30_000);
      this.#checkStep();
    }
    this.#windowCount = undefined;
    const left = this.unmet();
    if (left.failing.length)
      this.#violate(
        'stays-converged',
        `no longer converged after a quiet window: ${left.failing.join('; ')}`,
      );
    for (const st of this.#k.values()) {
      const n = all.get(st.key) ?? 0;
      const why = this.#whyNotReady(st);
      const every = why?.startsWith('dependency') ? this.scenario.requeueDependencyMs : st.spec.intervalMs;
      const limit = Math.floor(WINDOW_MS / (every * 0.95)) + (why && !why.startsWith('dependency') ? 14 : 2);
      if (st.exists && n > limit)
        this.#violate(
          'hot-loop',
          `${st.key} reconciled ${n} times in a quiet ${WINDOW_MS / 60_000}-minute window (at most ${limit} expected)`,
        );
    }
    this.#note(`window: ${this.#reconciles - before} reconciles`);
    return this.#result(stepsToConverge);
  }

  #budgetExceeded(): boolean {
    const requests = this.#procs.reduce((n, p) => n + p.transport.requests, 0);
    if (requests <= 2_000_000) return false;
    this.#violate('runaway', `more than 2,000,000 requests in one run`);
    return true;
  }

  #result(stepsToConverge: number | undefined): SimResult {
    return {
      seed: this.seed,
      violations: this.violations,
      chaosSteps: this.scenario.chaosSteps,
      stepsToConverge,
      steps: this.#step,
      requests: this.#procs.reduce((n, p) => n + p.transport.requests, 0),
      reconciles: this.#reconciles,
      restarts: this.#restarts,
      pushes: this.#pushes,
      maxReconcilesPerMinute: this.#maxPerMinute,
      traceHash: this.#hash.copy().digest('hex'),
      trace: this.#lines,
    };
  }

  /** Ends every process: transports die, queues shut down. */
  shutdown(): void {
    for (const proc of this.#procs) {
      proc.transport.kill(() => false);
      if (!proc.stop) proc.stop = proc.controller.stop(0).catch(() => {});
    }
  }

  get chaos(): boolean {
    return this.#chaos;
  }

  /** The simulated wall clock, for Date.now during the run. */
  now(): number {
    return this.#clock.now();
  }

  /** A timer on the simulated clock, for the global setTimeout during the run. */
  timer(fn: () => void, ms: number): TimerHandle {
    return this.#clock.setTimeout(fn, ms);
  }

  clearTimer(handle: TimerHandle): void {
    this.#clock.clearTimeout(handle);
  }
}

/** Runs one seed with Math.random and Date.now bound to the run, and puts them back after. */
export async function simulate(seed: number, options: SimOptions = {}): Promise<SimResult> {
  const sim = new Simulation(seed, options);
  Math.random = mulberry32(mix32(seed, 3));
  Date.now = () => sim.now();
  // Code under test that sleeps on the global setTimeout (health polling, recreate, termination
  // waits) sleeps on the simulated clock too; Node's own internals keep their real timers.
  const fake = new WeakSet<object>();
  globalThis.setTimeout = ((fn: (...args: unknown[]) => void, ms?: number, ...args: unknown[]) => {
    const handle = sim.timer(() => fn(...args), Number(ms) || 0);
    fake.add(handle as object);
    return handle;
  }) as unknown as typeof setTimeout;
  globalThis.clearTimeout = ((handle: unknown) => {
    if (handle && typeof handle === 'object' && fake.has(handle)) sim.clearTimer(handle as TimerHandle);
    else REAL_CLEAR_TIMEOUT(handle as NodeJS.Timeout);
  }) as typeof clearTimeout;
  try {
    return await sim.run();
  } catch (err) {
    sim.violations.push({
      invariant: 'sim-error',
      step: -1,
      atMs: -1,
      message: (err as Error).stack ?? String(err),
    });
    return {
      seed,
      violations: sim.violations,
      chaosSteps: sim.scenario.chaosSteps,
      stepsToConverge: undefined,
      steps: 0,
      requests: 0,
      reconciles: 0,
      restarts: 0,
      pushes: 0,
      maxReconcilesPerMinute: 0,
      traceHash: '',
      trace: [],
    };
  } finally {
    sim.shutdown();
    // Let what the dead processes still run unwind on this run's Math.random and clock.
    for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
    Math.random = REAL_MATH_RANDOM;
    Date.now = REAL_DATE_NOW;
    globalThis.setTimeout = REAL_SET_TIMEOUT;
    globalThis.clearTimeout = REAL_CLEAR_TIMEOUT;
  }
}
