import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { CompactHistogram } from './compact-histogram.ts';

/** How one reconcile ended, as the `result` label reports it. */
export type ReconcileMetricResult = 'success' | 'error' | 'stalled' | 'requeue' | 'dependency';

/** What `setConditions` reads of a condition. */
export interface ConditionLike {
  type: string;
  status: string;
}

interface MetricDescription {
  name: string;
  type: 'counter' | 'gauge' | 'histogram';
  labels: readonly string[];
  help: string;
}

const RECONCILE_DURATION = {
  name: 'mooring_reconcile_duration_seconds',
  type: 'histogram',
  labels: ['kind', 'result'],
  help: 'Time one reconcile took, by kind and result.',
} as const satisfies MetricDescription;

const RECONCILE_TOTAL = {
  name: 'mooring_reconcile_total',
  type: 'counter',
  labels: ['kind', 'result'],
  help: 'Reconciles finished, by kind and result (success, error, stalled, requeue, dependency).',
} as const satisfies MetricDescription;

const STEP_DURATION = {
  name: 'mooring_reconcile_step_duration_seconds',
  type: 'histogram',
  labels: ['kind', 'step'],
  help: "Time one step of a reconcile took (the kind's step list in docs/architecture.md), by kind and step: where a reconcile's time goes.",
} as const satisfies MetricDescription;

const QUEUE_DEPTH = {
  name: 'mooring_workqueue_depth',
  type: 'gauge',
  labels: ['kind'],
  help: 'Keys waiting in the work queue, by kind.',
} as const satisfies MetricDescription;

const CONDITION = {
  name: 'mooring_condition',
  type: 'gauge',
  labels: ['kind', 'namespace', 'name', 'type', 'status'],
  help: "1 for an object's current status of each condition type, 0 for the other statuses; removed with the object.",
} as const satisfies MetricDescription;

const API_REQUEST_DURATION = {
  name: 'mooring_api_request_duration_seconds',
  type: 'histogram',
  labels: ['verb', 'code'],
  help: 'Kubernetes API request latency, by HTTP verb and status code (`error` when no answer came).',
} as const satisfies MetricDescription;

// Flux's names (fluxcd/pkg runtime/metrics and the flux2-monitoring-example's kube-state-metrics
// config), so Flux's dashboards and alerts read Mooring; see docs/decisions.md.
const OBJECT_RECONCILE_DURATION = {
  name: 'gotk_reconcile_duration_seconds',
  type: 'histogram',
  labels: ['kind', 'name', 'namespace'],
  help: "Time one reconcile of an object took (Flux's metric); removed with the object.",
} as const satisfies MetricDescription;

const OBJECT_CONDITION = {
  name: 'gotk_reconcile_condition',
  type: 'gauge',
  labels: ['kind', 'name', 'namespace', 'type', 'status'],
  help: "Flux's name for `mooring_condition`: 1 for an object's current status of each condition type, 0 for the others; removed with the object.",
} as const satisfies MetricDescription;

const SUSPEND_STATUS = {
  name: 'gotk_suspend_status',
  type: 'gauge',
  labels: ['kind', 'name', 'namespace'],
  help: '1 while an object is suspended (`spec.suspend`), else 0; removed with the object.',
} as const satisfies MetricDescription;

const RESOURCE_INFO = {
  name: 'gotk_resource_info',
  type: 'gauge',
  labels: ['kind', 'name', 'namespace', 'ready', 'suspended', 'revision', 'source_kind', 'source_name'],
  help: 'Always 1, one series per object: its Ready status, whether it is suspended, the revision it last applied or stored, and its sourceRef; removed with the object.',
} as const satisfies MetricDescription;

const LAST_RESULT = {
  name: 'mooring_reconcile_last_result',
  type: 'gauge',
  labels: ['kind', 'name', 'namespace', 'result'],
  help: "1 for how an object's last reconcile ended (success, error, stalled, dependency), 0 for the other results; removed with the object.",
} as const satisfies MetricDescription;

const PUSH_TO_APPLIED = {
  name: 'mooring_push_to_applied_seconds',
  type: 'histogram',
  labels: ['name', 'namespace'],
  help: 'Per Kustomization: from a Receiver accepting a webhook for its source to the Kustomization applying the revision that fetch stored; removed with the object.',
} as const satisfies MetricDescription;

const RENDER_CACHE = {
  name: 'mooring_render_cache_requests_total',
  type: 'counter',
  labels: ['result'],
  help: "The kustomize operator's render cache: lookups that found a render (`hit`) and that rendered (`miss`).",
} as const satisfies MetricDescription;

const MOORING_METRICS: readonly MetricDescription[] = [
  RECONCILE_DURATION,
  RECONCILE_TOTAL,
  STEP_DURATION,
  QUEUE_DEPTH,
  CONDITION,
  API_REQUEST_DURATION,
  OBJECT_RECONCILE_DURATION,
  OBJECT_CONDITION,
  LAST_RESULT,
  SUSPEND_STATUS,
  RESOURCE_INFO,
  PUSH_TO_APPLIED,
  RENDER_CACHE,
];

const RECONCILE_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];
const API_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const PUSH_BUCKETS = [1, 2.5, 5, 10, 20, 30, 60, 120, 300, 600, 1800];
const CONDITION_STATUSES = ['True', 'False', 'Unknown'];
const RESULTS: readonly ReconcileMetricResult[] = ['success', 'error', 'stalled', 'dependency'];

/** What `gotk_resource_info` says of one object. */
export interface ResourceInfo {
  ready: string;
  suspended: boolean;
  revision: string;
  sourceKind: string;
  sourceName: string;
}

type ObjectLabels = { kind: string; name: string; namespace: string };
type InfoLabels = ObjectLabels & {
  ready: string;
  suspended: string;
  revision: string;
  source_kind: string;
  source_name: string;
};

export interface MetricsOptions {
  /** Add prom-client's process and Node.js metrics (`process_*`, `nodejs_*`); default true. */
  defaultMetrics?: boolean;
}

/** The operator's Prometheus metrics, in a registry of its own rather than prom-client's global one. */
export class Metrics {
  readonly registry: Registry;
  readonly #reconcileDuration: Histogram<'kind' | 'result'>;
  readonly #reconcileTotal: Counter<'kind' | 'result'>;
  readonly #stepDuration: Histogram<'kind' | 'step'>;
  readonly #queueDepth: Gauge<'kind'>;
  readonly #condition: Gauge<'kind' | 'namespace' | 'name' | 'type' | 'status'>;
  readonly #apiDuration: Histogram<'verb' | 'code'>;
  readonly #objectDuration: CompactHistogram<'kind' | 'name' | 'namespace'>;
  readonly #objectCondition: Gauge<'kind' | 'name' | 'namespace' | 'type' | 'status'>;
  readonly #lastResult: Gauge<'kind' | 'name' | 'namespace' | 'result'>;
  readonly #suspend: Gauge<'kind' | 'name' | 'namespace'>;
  readonly #info: Gauge<keyof InfoLabels>;
  readonly #pushToApplied: Histogram<'name' | 'namespace'>;
  readonly #renderCache: Counter<'result'>;
  /** Per object, the labels of its one `gotk_resource_info` series, so a change replaces it. */
  readonly #infoLabels = new Map<string, InfoLabels>();
  /** Per object, the per-object metrics it has series in, so deleting it removes exactly those. */
  readonly #perObject = new Map<string, Set<'duration' | 'result' | 'suspend' | 'push'>>();
  /** Condition types (and statuses) exported per object, so stale series can be removed. */
  readonly #objects = new Map<string, Map<string, Set<string>>>();

  constructor(options: MetricsOptions = {}) {
    this.registry = new Registry();
    const registers = [this.registry];
    this.#reconcileDuration = new Histogram({
      name: RECONCILE_DURATION.name,
      help: RECONCILE_DURATION.help,
      labelNames: RECONCILE_DURATION.labels,
      buckets: RECONCILE_BUCKETS,
      registers,
    });
    this.#reconcileTotal = new Counter({
      name: RECONCILE_TOTAL.name,
      help: RECONCILE_TOTAL.help,
      labelNames: RECONCILE_TOTAL.labels,
      registers,
    });
    this.#queueDepth = new Gauge({
      name: QUEUE_DEPTH.name,
      help: QUEUE_DEPTH.help,
      labelNames: QUEUE_DEPTH.labels,
      registers,
    });
    this.#condition = new Gauge({
      name: CONDITION.name,
      help: CONDITION.help,
      labelNames: CONDITION.labels,
      registers,
    });
    this.#apiDuration = new Histogram({
      name: API_REQUEST_DURATION.name,
      help: API_REQUEST_DURATION.help,
      labelNames: API_REQUEST_DURATION.labels,
      buckets: API_BUCKETS,
      registers,
    });
    this.#objectDuration = new CompactHistogram({
      name: OBJECT_RECONCILE_DURATION.name,
      help: OBJECT_RECONCILE_DURATION.help,
      labelNames: OBJECT_RECONCILE_DURATION.labels,
      buckets: RECONCILE_BUCKETS,
      registers,
    });
    this.#objectCondition = new Gauge({
      name: OBJECT_CONDITION.name,
      help: OBJECT_CONDITION.help,
      labelNames: OBJECT_CONDITION.labels,
      registers,
    });
    this.#lastResult = new Gauge({
      name: LAST_RESULT.name,
      help: LAST_RESULT.help,
      labelNames: LAST_RESULT.labels,
      registers,
    });
    this.#suspend = new Gauge({
      name: SUSPEND_STATUS.name,
      help: SUSPEND_STATUS.help,
      labelNames: SUSPEND_STATUS.labels,
      registers,
    });
    this.#info = new Gauge({
      name: RESOURCE_INFO.name,
      help: RESOURCE_INFO.help,
      labelNames: RESOURCE_INFO.labels,
      registers,
    });
    this.#stepDuration = new Histogram({
      name: STEP_DURATION.name,
      help: STEP_DURATION.help,
      labelNames: STEP_DURATION.labels,
      buckets: RECONCILE_BUCKETS,
      registers,
    });
    this.#pushToApplied = new Histogram({
      name: PUSH_TO_APPLIED.name,
      help: PUSH_TO_APPLIED.help,
      labelNames: PUSH_TO_APPLIED.labels,
      buckets: PUSH_BUCKETS,
      registers,
    });
    this.#renderCache = new Counter({
      name: RENDER_CACHE.name,
      help: RENDER_CACHE.help,
      labelNames: RENDER_CACHE.labels,
      registers,
    });
    // Both results exist from the start, so a rate over them is defined before the first miss.
    for (const result of ['hit', 'miss']) this.#renderCache.inc({ result }, 0);
    if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry });
  }

  /**
   * Records one finished reconcile: its count and its duration by kind, and with `object` its
   * duration and last result per object too.
   */
  observeReconcile(
    kind: string,
    result: ReconcileMetricResult,
    seconds: number,
    object?: { namespace: string; name: string },
  ): void {
    this.#reconcileTotal.inc({ kind, result });
    this.#reconcileDuration.observe({ kind, result }, seconds);
    if (!object) return;
    const labels = { kind, name: object.name, namespace: object.namespace };
    this.#objectDuration.observe(labels, seconds);
    const all = RESULTS.includes(result) ? RESULTS : [...RESULTS, result];
    for (const r of all) this.#lastResult.set({ ...labels, result: r }, r === result ? 1 : 0);
    this.#track(labels, 'duration', 'result');
  }

  /** Records how long one step of a reconcile took. */
  observeStep(kind: string, step: string, seconds: number): void {
    this.#stepDuration.observe({ kind, step }, seconds);
  }

  /** Exports whether an object is suspended and its one `gotk_resource_info` series, replacing the last one. */
  setResourceInfo(kind: string, namespace: string, name: string, info: ResourceInfo): void {
    const object = { kind, name, namespace };
    this.#suspend.set(object, info.suspended ? 1 : 0);
    this.#track(object, 'suspend');
    const labels: InfoLabels = {
      ...object,
      ready: info.ready,
      suspended: String(info.suspended),
      revision: info.revision,
      source_kind: info.sourceKind,
      source_name: info.sourceName,
    };
    const key = objectId(kind, namespace, name);
    const previous = this.#infoLabels.get(key);
    if (previous && JSON.stringify(previous) !== JSON.stringify(labels)) this.#info.remove(previous);
    this.#info.set(labels, 1);
    this.#infoLabels.set(key, labels);
  }

  /** Records one webhook-to-applied latency of a Kustomization. */
  observePushToApplied(namespace: string, name: string, seconds: number): void {
    this.#pushToApplied.observe({ name, namespace }, seconds);
    this.#track({ kind: 'Kustomization', name, namespace }, 'push');
  }

  /** Counts one render cache lookup. */
  observeRenderCache(hit: boolean): void {
    this.#renderCache.inc({ result: hit ? 'hit' : 'miss' });
  }

  setQueueDepth(kind: string, depth: number): void {
    this.#queueDepth.set({ kind }, depth);
  }

  /**
   * Exports an object's conditions: per type, 1 on the current status and 0 on the others. Types the
   * object no longer has are removed.
   */
  setConditions(kind: string, namespace: string, name: string, conditions: readonly ConditionLike[]): void {
    const key = objectId(kind, namespace, name);
    const previous = this.#objects.get(key) ?? new Map<string, Set<string>>();
    const current = new Map<string, Set<string>>();
    for (const { type, status } of conditions) {
      const statuses = new Set(CONDITION_STATUSES);
      statuses.add(status);
      for (const s of previous.get(type) ?? []) statuses.add(s);
      for (const s of statuses) {
        this.#condition.set({ kind, namespace, name, type, status: s }, s === status ? 1 : 0);
        this.#objectCondition.set({ kind, namespace, name, type, status: s }, s === status ? 1 : 0);
      }
      current.set(type, statuses);
    }
    for (const [type, statuses] of previous) {
      if (!current.has(type)) this.#removeType(kind, namespace, name, type, statuses);
    }
    if (current.size > 0) this.#objects.set(key, current);
    else this.#objects.delete(key);
  }

  /** Forgets every series of an object that is gone, so deleted objects do not linger as stale series. */
  deleteObject(kind: string, namespace: string, name: string): void {
    const key = objectId(kind, namespace, name);
    for (const [type, statuses] of this.#objects.get(key) ?? []) {
      this.#removeType(kind, namespace, name, type, statuses);
    }
    this.#objects.delete(key);
    const object = { kind, name, namespace };
    for (const metric of this.#perObject.get(key) ?? []) {
      if (metric === 'duration') this.#objectDuration.remove(object);
      else if (metric === 'suspend') this.#suspend.remove(object);
      else if (metric === 'push') this.#pushToApplied.remove({ name, namespace });
      else for (const result of RESULTS) this.#lastResult.remove({ ...object, result });
    }
    this.#perObject.delete(key);
    const info = this.#infoLabels.get(key);
    if (info) this.#info.remove(info);
    this.#infoLabels.delete(key);
  }

  /** Records one API request; `code` is the HTTP status, or `error` when the request got no answer. */
  observeApiRequest(verb: string, code: number | string, seconds: number): void {
    this.#apiDuration.observe({ verb, code: String(code) }, seconds);
  }

  /** The exposition format's content type, for the `/metrics` response. */
  get contentType(): string {
    return this.registry.contentType;
  }

  /** The metrics in Prometheus text format. */
  render(): Promise<string> {
    return this.registry.metrics();
  }

  #removeType(kind: string, namespace: string, name: string, type: string, statuses: Set<string>): void {
    for (const status of statuses) {
      this.#condition.remove({ kind, namespace, name, type, status });
      this.#objectCondition.remove({ kind, namespace, name, type, status });
    }
  }

  #track(object: ObjectLabels, ...metrics: ('duration' | 'result' | 'suspend' | 'push')[]): void {
    const key = objectId(object.kind, object.namespace, object.name);
    const set = this.#perObject.get(key) ?? new Set();
    for (const m of metrics) set.add(m);
    this.#perObject.set(key, set);
  }
}

function objectId(kind: string, namespace: string, name: string): string {
  return `${kind}\u0000${namespace}\u0000${name}`;
}

/** The metrics table for `docs/operations.md`. */
export function describeMetrics(): string {
  const rows = MOORING_METRICS.map(
    (m) => `| \`${m.name}\` | ${m.type} | ${m.labels.map((l) => `\`${l}\``).join(', ')} | ${m.help} |`,
  );
  rows.push(
    '| `process_*`, `nodejs_*` | mixed | | Process and Node.js runtime metrics (CPU, memory, event loop lag, GC, handles) from prom-client. |',
  );
  return ['| metric | type | labels | meaning |', '| --- | --- | --- | --- |', ...rows].join('\n');
}
