import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

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

const MOORING_METRICS: readonly MetricDescription[] = [
  RECONCILE_DURATION,
  RECONCILE_TOTAL,
  QUEUE_DEPTH,
  CONDITION,
  API_REQUEST_DURATION,
];

const RECONCILE_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];
const API_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const CONDITION_STATUSES = ['True', 'False', 'Unknown'];

export interface MetricsOptions {
  /** Add prom-client's process and Node.js metrics (`process_*`, `nodejs_*`); default true. */
  defaultMetrics?: boolean;
}

/** The operator's Prometheus metrics, in a registry of its own rather than prom-client's global one. */
export class Metrics {
  readonly registry: Registry;
  readonly #reconcileDuration: Histogram<'kind' | 'result'>;
  readonly #reconcileTotal: Counter<'kind' | 'result'>;
  readonly #queueDepth: Gauge<'kind'>;
  readonly #condition: Gauge<'kind' | 'namespace' | 'name' | 'type' | 'status'>;
  readonly #apiDuration: Histogram<'verb' | 'code'>;
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
    if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry });
  }

  /** Records one finished reconcile: its count and its duration. */
  observeReconcile(kind: string, result: ReconcileMetricResult, seconds: number): void {
    this.#reconcileTotal.inc({ kind, result });
    this.#reconcileDuration.observe({ kind, result }, seconds);
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
    for (const status of statuses) this.#condition.remove({ kind, namespace, name, type, status });
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
