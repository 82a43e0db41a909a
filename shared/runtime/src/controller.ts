import { ApiError } from './api-error.ts';
import { type Clock, childSignal, DeadlineScope, jitter, systemClock } from './clock.ts';
import {
  type Condition,
  conditionsEqual,
  getCondition,
  markReady,
  markReconciling,
  markRetrying,
  markStalled,
  setCondition,
} from './conditions.ts';
import { parseDuration } from './duration.ts';
import type { Informer, InformerOptions } from './informer.ts';
import type { KubeClient } from './kube-client.ts';
import { type KubeObject, objectKey } from './kube-object.ts';
import type { ResourceInfo } from './metrics.ts';
import { RetryableError, StalledError, WaitingError } from './reconcile-errors.ts';
import { resourceInfoOf } from './resource-info.ts';
import { type InformerLease, SharedInformers } from './shared-informers.ts';
import { WorkQueue } from './work-queue.ts';

/** `reconcile.mooring.dev/requestedAt`: any new value asks for a reconcile now. */
export const REQUESTED_AT_ANNOTATION = 'reconcile.mooring.dev/requestedAt';
/** The field manager of every write the runtime makes. */
export const FIELD_MANAGER = 'mooring';

/** The shape every Mooring object shares: a spec that may suspend it and a kstatus status. */
export interface MooringObject extends KubeObject {
  spec?: { suspend?: boolean; interval?: string; [key: string]: unknown };
  status?: MooringStatus;
}

export interface MooringStatus {
  observedGeneration?: number;
  lastHandledReconcileAt?: string;
  conditions?: Condition[];
  [key: string]: unknown;
}

/** What a reconcile may log with; pino's Logger fits. */
export interface RuntimeLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
  child(bindings: Record<string, unknown>): RuntimeLogger;
}

/** What the controller reports; the Metrics class fits. */
export interface ControllerMetrics {
  /** `object` adds the per-object duration and last result. */
  observeReconcile(
    kind: string,
    result: ReconcileOutcome,
    seconds: number,
    object?: { namespace: string; name: string },
  ): void;
  /** The suspend gauge and the info series of an object. */
  setResourceInfo?(kind: string, namespace: string, name: string, info: ResourceInfo): void;
  observePushToApplied?(namespace: string, name: string, seconds: number): void;
  observeRenderCache?(hit: boolean): void;
  observeStep?(kind: string, step: string, seconds: number): void;
  setQueueDepth(kind: string, depth: number): void;
  setConditions(kind: string, namespace: string, name: string, conditions: Condition[]): void;
  deleteObject(kind: string, namespace: string, name: string): void;
}

/** Where events go; the EventRecorder fits. */
export interface ControllerEvents {
  record(
    obj: KubeObject,
    event: { severity: 'info' | 'error'; reason: string; message: string; metadata?: Record<string, string> },
  ): void;
}

export type ReconcileOutcome = 'success' | 'error' | 'stalled' | 'dependency';

export interface ReconcileContext {
  /** The status being built; written once when the reconcile ends. Conditions are set through `setCondition`. */
  status: MooringStatus;
  setCondition(type: string, status: 'True' | 'False' | 'Unknown', reason: string, message: string): void;
  event(severity: 'info' | 'error', reason: string, message: string, metadata?: Record<string, string>): void;
  log: RuntimeLogger;
  /** Aborts when the operator shuts down and its grace period is over. */
  signal: AbortSignal;
  /**
   * A signal that aborts with a TimeoutError `ms` from now, or with `signal`: a remote call's or
   * the whole reconcile's `spec.timeout`. Its timer is cleared when the reconcile ends, so no
   * deadline outlives the reconcile that set it.
   */
  deadline(ms: number): AbortSignal;
  now(): Date;
  /** Metrics only a reconciler can know: time per step, the render cache, push-to-applied latency. */
  metrics?: Pick<ControllerMetrics, 'observePushToApplied' | 'observeRenderCache' | 'observeStep'>;
  /**
   * Writes the status built so far now, with Reconciling True (reason Progressing) and `message`,
   * instead of only when the reconcile ends: for an intent that must survive a crash (what is about
   * to be applied) and for a long apply or health wait that users should see under way.
   */
  saveProgress(message: string): Promise<void>;
  /**
   * saveProgress, on the condition that the object is still at the version this reconcile's status
   * was built on (a resourceVersion precondition): false, with nothing written, when it has moved on
   * or there is nothing new to write. True means the stored status was the one the reconcile
   * started from, so a caller need not read it first (the Kustomization's inventory intent).
   */
  saveProgressIfUnchanged?(message: string): Promise<boolean>;
  /** This kind's and the watched kinds' objects as the informers hold them: reads with no API call. */
  cache?: ObjectCache;
}

/** Reads from a controller's informers; `covers` says whether an absent object is really absent. */
export interface ObjectCache {
  covers(kind: string, namespace: string): boolean;
  get(kind: string, namespace: string, name: string): KubeObject | undefined;
}

export interface ReconcileResult {
  /** Ready's message on success. */
  message: string;
  reason?: string;
  /** Next reconcile; defaults to `spec.interval`. */
  requeueAfterMs?: number;
  /** Carried in the Ready event's metadata (the event contract's `revision`). */
  revision?: string;
  /**
   * The reconcile already sent the event that tells of this success (a source's NewArtifact): no
   * Ready event follows it, as Flux's source-controller sends one or the other.
   */
  announced?: boolean;
}

/**
 * Another kind whose changes call for reconciling some of this kind's objects: a Kustomization
 * when its source has a new revision or a dependency turned Ready, a GitRepository when an
 * included one moved.
 */
export interface Watch<T extends MooringObject> {
  apiVersion: string;
  kind: string;
  /** Keys (`namespace/name`) of this kind's objects to reconcile now; `old` is absent on add and delete. */
  enqueue(changed: KubeObject, old: KubeObject | undefined, objects: readonly T[]): string[];
}

/** One kind's reconcile logic; the runtime does queues, finalizers, suspend, status and events. */
export interface Reconciler<T extends MooringObject> {
  apiVersion: string;
  kind: string;
  /** Added on first reconcile; `finalize` runs before it is removed on delete. */
  finalizer?: string;
  /** Used when the object has no `spec.interval`. */
  defaultIntervalMs: number;
  reconcile(obj: T, ctx: ReconcileContext): Promise<ReconcileResult>;
  finalize?(obj: T, ctx: ReconcileContext): Promise<void>;
  /** Other kinds to watch; their changes enqueue the objects `enqueue` names. */
  watches?: Watch<T>[];
  /**
   * Called once, when the controller is made, with its queue: for news a `Watch` cannot express,
   * such as drift seen on an object the reconciler applied.
   */
  connect?(queue: ReconcileQueue): void;
}

/** What a reconciler may do with its controller's queue: ask for a key now, or after a delay. */
export interface ReconcileQueue {
  add(key: string): void;
  addAfter(key: string, ms: number): void;
}

export interface ControllerOptions {
  client: KubeClient;
  concurrent?: number;
  namespace?: string;
  labelSelector?: string;
  clock?: Clock;
  log: RuntimeLogger;
  metrics?: ControllerMetrics;
  events?: ControllerEvents;
  reportingController: string;
  /** Overrides for the informer and queue, for tests. */
  informer?: { relistIntervalMs?: number; watchTimeoutSeconds?: number };
  /** Informers shared with the process's other controllers; without, this controller has a set of its own. */
  informers?: SharedInformers;
  queue?: { baseDelayMs?: number; maxDelayMs?: number };
}

const requestedAt = (obj: KubeObject) => obj.metadata.annotations?.[REQUESTED_AT_ANNOTATION];

/** Only changes a user makes call for a reconcile; the runtime's own status writes do not. */
function needsReconcile(old: KubeObject, cur: KubeObject): boolean {
  return (
    old.metadata.generation !== cur.metadata.generation ||
    requestedAt(old) !== requestedAt(cur) ||
    (!old.metadata.deletionTimestamp && !!cur.metadata.deletionTimestamp)
  );
}

/** A status this controller wrote, and the object version the write made. */
interface WrittenStatus {
  uid: string;
  resourceVersion: string;
  status: MooringStatus;
}

/** `a` is an older version of an object than `b`; unknown (not etcd revisions) counts as older. */
function isOlderVersion(a: string | undefined, b: string): boolean {
  if (a === undefined || !/^\d+$/.test(a) || !/^\d+$/.test(b)) return true;
  return BigInt(a) < BigInt(b);
}

/**
 * Runs one Reconciler: an informer feeds a work queue, `concurrent` workers take keys (never the
 * same key twice at once), and every pass ends in at most one status write and, on a Ready
 * transition, one event.
 */
export class Controller<T extends MooringObject> {
  readonly informer: Informer<T>;
  readonly #informers: SharedInformers;
  readonly #primary: InformerLease<T>;
  /** Informers of the watched kinds that are not this kind itself. */
  readonly #secondary: InformerLease<KubeObject>[] = [];
  /** Every informer by kind (this one's and the watched ones'), for `ReconcileContext.cache`. */
  readonly #byKind = new Map<string, Informer<KubeObject>>();
  readonly #cache: ObjectCache = {
    // This kind's own informer holds only its shard when a label selector is set.
    covers: (kind, namespace) =>
      this.#byKind.has(kind) &&
      !(kind === this.#r.kind && this.#o.labelSelector) &&
      (this.#o.namespace === undefined || this.#o.namespace === namespace),
    get: (kind, namespace, name) => {
      const found = this.#byKind.get(kind)?.get(`${namespace}/${name}`);
      // A list's items carry no kind; the chain of dependencies keys on it.
      return found && { ...found, kind };
    },
  };
  readonly queue: WorkQueue;
  readonly #r: Reconciler<T>;
  readonly #o: ControllerOptions;
  readonly #clock: Clock;
  readonly #workers: Promise<void>[] = [];
  readonly #inFlight = new Set<Promise<void>>();
  /** Per object, the last status this controller wrote (see #baseOf). */
  readonly #written = new Map<string, WrittenStatus>();
  #hardStop = new AbortController();

  constructor(reconciler: Reconciler<T>, options: ControllerOptions) {
    this.#r = reconciler;
    this.#o = options;
    this.#clock = options.clock ?? systemClock;
    this.queue = new WorkQueue({ clock: this.#clock, ...options.queue });
    this.#informers = options.informers ?? new SharedInformers(options.client);
    this.#primary = this.#lease<T>({
      apiVersion: reconciler.apiVersion,
      kind: reconciler.kind,
      namespace: options.namespace,
      labelSelector: options.labelSelector,
    });
    this.informer = this.#primary.informer;
    this.informer.on((e) => {
      const key = objectKey(e.object);
      if (e.type === 'deleted') {
        this.#o.metrics?.deleteObject(
          this.#r.kind,
          e.object.metadata.namespace ?? '',
          e.object.metadata.name ?? '',
        );
        this.queue.forget(key);
        this.#written.delete(key);
        return;
      }
      this.#unseenWrite(e.object);
      if (e.type === 'added' || (e.old && needsReconcile(e.old, e.object))) this.queue.add(key);
      this.#o.metrics?.setQueueDepth(this.#r.kind, this.queue.pending);
    });
    this.#byKind.set(reconciler.kind, this.informer as unknown as Informer<KubeObject>);
    reconciler.connect?.({
      add: (key) => this.queue.add(key),
      addAfter: (key, ms) => this.queue.addAfter(key, ms),
    });
    for (const watch of reconciler.watches ?? []) {
      const same = watch.apiVersion === reconciler.apiVersion && watch.kind === reconciler.kind;
      // Sources and dependencies are not sharded by the label selector, only this kind's objects are.
      const secondary = same
        ? undefined
        : this.#lease<KubeObject>({
            apiVersion: watch.apiVersion,
            kind: watch.kind,
            namespace: options.namespace,
          });
      const informer = secondary?.informer ?? (this.informer as unknown as Informer<KubeObject>);
      if (secondary) this.#secondary.push(secondary);
      this.#byKind.set(watch.kind, informer);
      informer.on((e) => {
        // The initial list is not a change; objects are reconciled on their own add anyway.
        if (e.type === 'added' && !informer.hasSynced()) return;
        const keys = watch.enqueue(e.object, e.type === 'updated' ? e.old : undefined, this.informer.list());
        for (const key of keys) this.queue.add(key);
      });
    }
  }

  get kind(): string {
    return this.#r.kind;
  }

  /** An informer of the process's shared ones (or, without them, of this controller's own set). */
  #lease<K extends KubeObject>(
    what: Pick<InformerOptions, 'apiVersion' | 'kind' | 'namespace' | 'labelSelector'>,
  ): InformerLease<K> {
    return this.#informers.lease<K>({
      ...what,
      clock: this.#clock,
      ...this.#o.informer,
      onError: (err, attempt) =>
        this.#o.log.warn({ kind: what.kind, attempt, err: err.message }, 'informer restarting after error'),
    });
  }

  /** Fills the cache, then starts the workers. */
  async start(): Promise<void> {
    this.#hardStop = new AbortController();
    await Promise.all(this.#secondary.map((i) => i.start()));
    // stop() may have come while the secondary informers synced: starting the primary now would
    // leave its list/watch loop retrying forever after the controller stopped.
    if (this.queue.shuttingDown) return;
    await this.#primary.start();
    for (let i = 0; i < (this.#o.concurrent ?? 4); i++) this.#workers.push(this.#worker());
  }

  /**
   * Stops taking work, lets reconciles in flight finish for up to `graceMs`, then aborts their
   * signal and waits for them to return.
   */
  async stop(graceMs: number): Promise<void> {
    this.queue.shutDown();
    await this.#primary.stop();
    await Promise.all(this.#secondary.map((i) => i.stop()));
    const inFlight = Promise.all([...this.#inFlight]);
    let timer: ReturnType<Clock['setTimeout']> | undefined;
    const deadline = new Promise<void>((resolve) => {
      timer = this.#clock.setTimeout(resolve, graceMs);
    });
    await Promise.race([inFlight, deadline]);
    if (timer) this.#clock.clearTimeout(timer);
    this.#hardStop.abort();
    await Promise.all(this.#workers);
  }

  async #worker(): Promise<void> {
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined) return;
      const run = this.#process(key).finally(() => {
        this.queue.done(key);
        this.#inFlight.delete(run);
        this.#o.metrics?.setQueueDepth(this.#r.kind, this.queue.pending);
      });
      this.#inFlight.add(run);
      await run;
    }
  }

  async #process(key: string): Promise<void> {
    const obj = this.informer.get(key);
    if (!obj) {
      this.queue.forget(key);
      return;
    }
    const log = this.#o.log.child({
      kind: this.#r.kind,
      namespace: obj.metadata.namespace,
      name: obj.metadata.name,
      reconcileID: Math.random().toString(36).slice(2, 10),
    });
    const started = this.#clock.now();
    let outcome: ReconcileOutcome = 'success';
    // The reconcile's own stop signal: what it combines with AbortSignal.any hangs off this one,
    // which is let go when the reconcile ends, not off the controller's lifelong one.
    const stop = childSignal(this.#hardStop.signal);
    const deadlines = new DeadlineScope(stop.signal);
    try {
      outcome = await this.#reconcileObject(obj, log, stop.signal, deadlines);
    } catch (err) {
      // Only status writes and finalizer edits get here; the reconcile's own errors are handled inside.
      outcome = 'error';
      log.error({ err: (err as Error).message }, 'reconcile bookkeeping failed');
      this.queue.addRateLimited(key);
    } finally {
      // A deleted object's series must not come back after the informer removed them.
      const object = this.#exists(obj)
        ? { namespace: obj.metadata.namespace ?? '', name: obj.metadata.name ?? '' }
        : undefined;
      this.#o.metrics?.observeReconcile(this.#r.kind, outcome, (this.#clock.now() - started) / 1000, object);
      deadlines.clear();
      stop.detach();
    }
  }

  #context(
    obj: T,
    status: MooringStatus,
    log: RuntimeLogger,
    signal: AbortSignal,
    deadlines: DeadlineScope,
    save: (ifUnchanged: boolean) => Promise<boolean> = async () => false,
  ): ReconcileContext {
    const now = () => new Date(this.#clock.now());
    const progress = (message: string, ifUnchanged: boolean) => {
      status.conditions = markReconciling(
        status.conditions,
        'Progressing',
        message,
        obj.metadata.generation,
        now(),
      );
      return save(ifUnchanged);
    };
    return {
      status,
      setCondition: (type, s, reason, message) => {
        status.conditions = setCondition(
          status.conditions,
          { type, status: s, reason, message, observedGeneration: obj.metadata.generation },
          now(),
        );
      },
      event: (severity, reason, message, metadata) =>
        this.#o.events?.record(obj, { severity, reason, message, metadata }),
      log,
      signal,
      deadline: (ms) => deadlines.signal(ms),
      now,
      metrics: this.#o.metrics,
      cache: this.#cache,
      saveProgress: async (message) => {
        await progress(message, false);
      },
      saveProgressIfUnchanged: (message) => progress(message, true),
    };
  }

  async #reconcileObject(
    obj: T,
    log: RuntimeLogger,
    signal: AbortSignal,
    deadlines: DeadlineScope,
  ): Promise<ReconcileOutcome> {
    const key = objectKey(obj);
    if (obj.metadata.deletionTimestamp) {
      await this.#finalize(obj, log, signal, deadlines);
      return 'success';
    }
    if (obj.spec?.suspend) {
      log.debug({}, 'suspended; skipping');
      this.#exportInfo(obj, this.#baseOf(obj).status);
      return 'success';
    }
    const current = await this.#ensureFinalizer(obj);
    const base = this.#baseOf(current);
    const status: MooringStatus = structuredClone(base.status);
    const before = structuredClone(status);
    // What the API server holds now: progress writes move it, the final write compares against it.
    let written = before;
    // The version `written` is stored at (what the reconcile built on, then its own last write):
    // the precondition of a conditional save. Without one there is nothing to make it conditional on.
    let writtenAt = base.resourceVersion;
    const ctx = this.#context(current, status, log, signal, deadlines, async (ifUnchanged) => {
      if (ifUnchanged && writtenAt === undefined) return false;
      const saved = await this.#writeStatus(current, written, status, ifUnchanged ? writtenAt : undefined);
      if (saved === 'conflict' || (ifUnchanged && (saved === 'unchanged' || !saved.resourceVersion)))
        return false;
      written = structuredClone(status);
      if (saved !== 'unchanged') writtenAt = saved.resourceVersion;
      return true;
    });
    const generation = current.metadata.generation;
    const now = ctx.now();
    let outcome: ReconcileOutcome;
    let revision: string | undefined;
    let announced = false;
    try {
      const result = await this.#r.reconcile(current, ctx);
      revision = result.revision;
      announced = result.announced === true;
      status.conditions = markReady(
        status.conditions,
        result.reason ?? 'ReconciliationSucceeded',
        result.message,
        generation,
        now,
      );
      status.observedGeneration = generation;
      this.queue.forget(key);
      this.queue.addAfter(key, jitter(result.requeueAfterMs ?? this.#interval(current), 0.05));
      outcome = 'success';
    } catch (err) {
      const message = (err as Error).message;
      if (err instanceof StalledError) {
        status.conditions = markStalled(status.conditions, err.reason, message, generation, now);
        status.observedGeneration = generation;
        this.queue.forget(key);
        outcome = 'stalled';
        log.warn(
          { reason: err.reason, err: message },
          'stalled: retrying cannot help until the spec changes',
        );
      } else if (err instanceof WaitingError) {
        status.conditions = markRetrying(status.conditions, err.reason, err.reason, message, generation, now);
        this.queue.addAfter(key, jitter(err.requeueAfterMs, 0.05));
        outcome = 'dependency';
        log.info({ reason: err.reason, msg: message }, 'waiting');
      } else {
        const reason = err instanceof RetryableError ? err.reason : 'ReconciliationFailed';
        status.conditions = markRetrying(
          status.conditions,
          'ProgressingWithRetry',
          reason,
          message,
          generation,
          now,
        );
        // spec.retryInterval, when set, is the retry delay (Flux's meaning); else exponential backoff.
        const retry = this.#retryInterval(current);
        if (retry === undefined) this.queue.addRateLimited(key);
        else this.queue.addAfter(key, jitter(retry, 0.05));
        outcome = 'error';
        log.error({ reason, err: message, failures: this.queue.failures(key) }, 'reconcile failed');
      }
    }
    const handled = requestedAt(current);
    if (handled !== undefined) status.lastHandledReconcileAt = handled;
    await this.#writeStatus(current, written, status);
    this.#announce(current, before, status, revision, announced);
    this.#exportInfo(current, status);
    return outcome;
  }

  /** The object is still in the cache and not being deleted: its series may be written. */
  #exists(obj: T): boolean {
    const cached = this.informer.get(objectKey(obj));
    return !!cached && cached.metadata.uid === obj.metadata.uid && !cached.metadata.deletionTimestamp;
  }

  #exportInfo(obj: T, status: MooringStatus): void {
    if (!this.#exists(obj)) return;
    this.#o.metrics?.setResourceInfo?.(
      this.#r.kind,
      obj.metadata.namespace ?? '',
      obj.metadata.name ?? '',
      resourceInfoOf(obj, status),
    );
  }

  #retryInterval(obj: T): number | undefined {
    const spec = (obj.spec as { retryInterval?: unknown } | undefined)?.retryInterval;
    if (typeof spec !== 'string') return undefined;
    try {
      return parseDuration(spec);
    } catch {
      return undefined;
    }
  }

  #interval(obj: T): number {
    const spec = obj.spec?.interval;
    if (typeof spec === 'string') {
      try {
        return parseDuration(spec);
      } catch {
        /* the CRD validates intervals; fall back if one slips through */
      }
    }
    return this.#r.defaultIntervalMs;
  }

  /** An event when Ready changes status or reason, or its message while True (a new revision); a steady object stays quiet. */
  #announce(
    obj: T,
    before: MooringStatus,
    after: MooringStatus,
    revision: string | undefined,
    announced = false,
  ): void {
    const was = getCondition(before.conditions, 'Ready');
    const is = getCondition(after.conditions, 'Ready');
    if (is)
      this.#o.metrics?.setConditions(
        this.#r.kind,
        obj.metadata.namespace ?? '',
        obj.metadata.name ?? '',
        after.conditions ?? [],
      );
    // A new Ready message while True means new work done (`Applied revision: <new>`): alerts want it.
    const same =
      was &&
      was.status === is?.status &&
      was.reason === is?.reason &&
      (is?.status !== 'True' || was.message === is.message);
    if (!is || same || (announced && is.status === 'True')) return;
    this.#o.events?.record(obj, {
      severity: is.status === 'False' ? 'error' : 'info',
      reason: is.reason,
      message: is.message,
      metadata: revision ? { revision } : undefined,
    });
  }

  /**
   * The status a reconcile starts from: the informer's copy, unless this controller has written a
   * newer one that the watch has not delivered yet. Each write is a forced server-side apply of
   * the whole status, so building on a stale copy would drop every field the reconcile does not
   * set again (an ImageUpdateAutomation lost its lastPushCommit that way). ResourceVersions are
   * compared as etcd revisions (the numbers kube-apiserver hands out); a copy at or after our
   * write (ours, or a later one by someone else) wins. With the resourceVersion that status was
   * stored at.
   */
  #baseOf(obj: T): { status: MooringStatus; resourceVersion: string | undefined } {
    const mine = this.#unseenWrite(obj);
    if (!mine) return { status: obj.status ?? {}, resourceVersion: obj.metadata.resourceVersion };
    return { status: mine.status, resourceVersion: mine.resourceVersion };
  }

  /**
   * This controller's last status write of `obj` if `obj` (the informer's copy) is older than it;
   * forgotten once a copy at or after it arrives, or the object was made anew, so the record of
   * a thousand settled objects' statuses is not kept until each one's next reconcile.
   */
  #unseenWrite(obj: T): WrittenStatus | undefined {
    const key = objectKey(obj);
    const mine = this.#written.get(key);
    if (!mine) return undefined;
    if (mine.uid === obj.metadata.uid && isOlderVersion(obj.metadata.resourceVersion, mine.resourceVersion))
      return mine;
    this.#written.delete(key);
    return undefined;
  }

  /** Status writes whose object the informer has not delivered yet (for tests). */
  get unseenStatusWrites(): number {
    return this.#written.size;
  }

  /**
   * One status write per reconcile, skipped when nothing changed; a conflict retries. With
   * `ifVersion`, the write is conditional on the object still being at that resourceVersion, and a
   * conflict is the answer ('conflict'), not retried.
   */
  async #writeStatus(
    obj: T,
    before: MooringStatus,
    after: MooringStatus,
    ifVersion?: string,
  ): Promise<'unchanged' | 'conflict' | { resourceVersion: string | undefined }> {
    const { conditions: bc, ...restBefore } = before;
    const { conditions: ac, ...restAfter } = after;
    if (conditionsEqual(bc ?? [], ac ?? []) && JSON.stringify(restBefore) === JSON.stringify(restAfter))
      return 'unchanged';
    const conditional = ifVersion !== undefined;
    const body = {
      apiVersion: obj.apiVersion,
      kind: obj.kind,
      metadata: {
        name: obj.metadata.name,
        namespace: obj.metadata.namespace,
        ...(conditional && { resourceVersion: ifVersion }),
      },
      status: after,
    };
    for (let attempt = 1; ; attempt++) {
      try {
        const saved = await this.#o.client.applyStatus(body, { fieldManager: FIELD_MANAGER, force: true });
        const { uid, resourceVersion } = (saved as KubeObject).metadata;
        if (uid && resourceVersion) {
          this.#written.set(objectKey(obj), { uid, resourceVersion, status: structuredClone(after) });
          // The watch may have delivered the write before its response came.
          const cached = this.informer.get(objectKey(obj));
          if (cached) this.#unseenWrite(cached);
        }
        return { resourceVersion };
      } catch (err) {
        if (err instanceof ApiError && err.isNotFound) return { resourceVersion: undefined };
        if (conditional && err instanceof ApiError && err.isConflict) return 'conflict';
        if (!(err instanceof ApiError && err.isConflict) || attempt >= 3) throw err;
      }
    }
  }

  async #ensureFinalizer(obj: T): Promise<T> {
    const f = this.#r.finalizer;
    if (!f || obj.metadata.finalizers?.includes(f)) return obj;
    return this.#setFinalizers(obj, [...(obj.metadata.finalizers ?? []), f]);
  }

  async #finalize(obj: T, log: RuntimeLogger, signal: AbortSignal, deadlines: DeadlineScope): Promise<void> {
    const f = this.#r.finalizer;
    if (!f || !obj.metadata.finalizers?.includes(f)) return;
    if (this.#r.finalize) {
      const status = structuredClone(obj.status ?? {});
      await this.#r.finalize(obj, this.#context(obj, status, log, signal, deadlines));
    }
    await this.#setFinalizers(
      obj,
      obj.metadata.finalizers.filter((x) => x !== f),
    );
    log.info({}, 'finalized');
  }

  /** Replaces the finalizer list guarded by resourceVersion; on conflict re-reads and tries again. */
  async #setFinalizers(obj: T, finalizers: string[]): Promise<T> {
    const key = {
      apiVersion: obj.apiVersion,
      kind: obj.kind,
      name: obj.metadata.name ?? '',
      namespace: obj.metadata.namespace,
    };
    let current = obj;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.#o.client.mergePatch<T>(key, {
          metadata: { finalizers, resourceVersion: current.metadata.resourceVersion },
        });
      } catch (err) {
        if (!(err instanceof ApiError && err.isConflict) || attempt >= 3) throw err;
        current = await this.#o.client.get<T>(key);
        const had = new Set(obj.metadata.finalizers ?? []);
        const want = new Set(finalizers);
        // Re-apply only our own change on top of whatever others did meanwhile.
        finalizers = [
          ...(current.metadata.finalizers ?? []).filter((x) => want.has(x) || !had.has(x)),
          ...finalizers.filter((x) => !(current.metadata.finalizers ?? []).includes(x)),
        ];
      }
    }
  }
}
