import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { CompactHistogram } from './compact-histogram.ts';
import { ObjectGauges, type ObjectState } from './object-gauges.ts';

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

/** What `gotk_resource_info` says of one object. */
export interface ResourceInfo {
  ready: string;
  suspended: boolean;
  revision: string;
  sourceKind: string;
  sourceName: string;
}

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
  readonly #apiDuration: Histogram<'verb' | 'code'>;
  readonly #objectDuration: CompactHistogram<'kind' | 'name' | 'namespace'>;
  readonly #pushToApplied: Histogram<'name' | 'namespace'>;
  readonly #renderCache: Counter<'result'>;
  /** Per object, its conditions, last result, suspend and info, printed by the per-object gauges. */
  readonly #objects = new ObjectGauges();

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
    // Both condition metrics print {kind, namespace, name, type, status}, in that order.
    const conditionSeries = (
      state: ObjectState,
      emit: (labels: Record<string, string>, value: number) => void,
    ) => {
      const { kind, namespace, name } = state.labels;
      for (const { type, statuses, current } of state.conditions)
        for (const status of statuses)
          emit({ kind, namespace, name, type, status }, status === current ? 1 : 0);
    };
    this.#objects.gauge({ name: CONDITION.name, help: CONDITION.help, registers, series: conditionSeries });
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
    this.#objects.gauge({
      name: OBJECT_CONDITION.name,
      help: OBJECT_CONDITION.help,
      registers,
      series: conditionSeries,
    });
    this.#objects.gauge({
      name: LAST_RESULT.name,
      help: LAST_RESULT.help,
      registers,
      series: (state, emit) => {
        if (state.result === undefined) return;
        for (const result of state.results)
          emit({ ...state.labels, result }, result === state.result ? 1 : 0);
      },
    });
    this.#objects.gauge({
      name: SUSPEND_STATUS.name,
      help: SUSPEND_STATUS.help,
      registers,
      series: (state, emit) => {
        if (state.suspended !== undefined) emit({ ...state.labels }, state.suspended ? 1 : 0);
      },
    });
    this.#objects.gauge({
      name: RESOURCE_INFO.name,
      help: RESOURCE_INFO.help,
      registers,
      series: (state, emit) => {
        if (state.info) emit({ ...state.labels, ...state.info }, 1);
      },
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
    const state = this.#objects.state({ kind, name: object.name, namespace: object.namespace });
    this.#objectDuration.observe(state.labels, seconds);
    state.timed = true;
    this.#objects.setResult(state, result);
  }

  /** Records how long one step of a reconcile took. */
  observeStep(kind: string, step: string, seconds: number): void {
    this.#stepDuration.observe({ kind, step }, seconds);
  }

  /** Exports whether an object is suspended and its one `gotk_resource_info` series, replacing the last one. */
  setResourceInfo(kind: string, namespace: string, name: string, info: ResourceInfo): void {
    const state = this.#objects.state({ kind, name, namespace });
    state.suspended = info.suspended;
    state.info = {
      ready: info.ready,
      suspended: String(info.suspended),
      revision: info.revision,
      source_kind: info.sourceKind,
      source_name: info.sourceName,
    };
  }

  /** Records one webhook-to-applied latency of a Kustomization. */
  observePushToApplied(namespace: string, name: string, seconds: number): void {
    this.#pushToApplied.observe({ name, namespace }, seconds);
    this.#objects.state({ kind: 'Kustomization', name, namespace }).pushed = true;
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
    const labels = { kind, name, namespace };
    if (conditions.length === 0 && !this.#objects.find(labels)) return;
    this.#objects.setConditions(this.#objects.state(labels), conditions);
  }

  /** Forgets every series of an object that is gone, so deleted objects do not linger as stale series. */
  deleteObject(kind: string, namespace: string, name: string): void {
    const labels = { kind, name, namespace };
    const state = this.#objects.find(labels);
    if (!state) return;
    if (state.timed) this.#objectDuration.remove(state.labels);
    if (state.pushed) this.#pushToApplied.remove({ name, namespace });
    this.#objects.delete(labels);
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
