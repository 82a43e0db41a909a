import type { Gauge, Registry } from 'prom-client';

/** The labels every per-object series starts with. */
export interface ObjectLabels {
  kind: string;
  name: string;
  namespace: string;
}

/** What `gotk_resource_info` adds to an object's labels. */
export interface InfoValues {
  ready: string;
  suspended: string;
  revision: string;
  source_kind: string;
  source_name: string;
}

/** One printed series, as prom-client's Gauge exports it. */
interface GaugeValue {
  labels: Record<string, string>;
  value: number;
}

interface ConditionState {
  type: string;
  /** Every status exported for this type so far; `DEFAULT_STATUSES` itself unless an odd one came. */
  statuses: readonly string[];
  current: string;
}

/** One object's gauges: a few fields, where prom-client kept a labels object and a key per series. */
export interface ObjectState {
  readonly labels: Readonly<ObjectLabels>;
  conditions: ConditionState[];
  /** The last reconcile's result, and every result exported so far (0 for all but the last). */
  result: string | undefined;
  results: readonly string[];
  suspended: boolean | undefined;
  info: InfoValues | undefined;
  /** Whether the object has series in the histograms kept elsewhere (duration, push to applied). */
  timed: boolean;
  pushed: boolean;
}

export const DEFAULT_STATUSES: readonly string[] = ['True', 'False', 'Unknown'];
export const DEFAULT_RESULTS: readonly string[] = ['success', 'error', 'stalled', 'dependency'];

/**
 * The per-object gauges (conditions, last result, suspend, resource info) kept as one small record
 * per object and printed from it on scrape. prom-client's Gauge keeps a labels object and a hashed
 * key string per series, and an object has about twenty series here: at 1,000 Kustomizations that
 * was 5.8 MB of a converged operator's heap, the largest part of it after the caches. Written here
 * because prom-client has no collector of computed series that its registry prints like its own.
 */
export class ObjectGauges {
  readonly #objects = new Map<string, ObjectState>();

  /** The object's record, made on first use. */
  state(labels: ObjectLabels): ObjectState {
    const key = objectId(labels);
    let state = this.#objects.get(key);
    if (!state) {
      state = {
        labels: { kind: labels.kind, name: labels.name, namespace: labels.namespace },
        conditions: [],
        result: undefined,
        results: DEFAULT_RESULTS,
        suspended: undefined,
        info: undefined,
        timed: false,
        pushed: false,
      };
      this.#objects.set(key, state);
    }
    return state;
  }

  /** The object's record if it has one. */
  find(labels: ObjectLabels): ObjectState | undefined {
    return this.#objects.get(objectId(labels));
  }

  delete(labels: ObjectLabels): void {
    this.#objects.delete(objectId(labels));
  }

  /** Sets the types' current statuses; a type's statuses seen before stay exported as 0. */
  setConditions(state: ObjectState, conditions: readonly { type: string; status: string }[]): void {
    state.conditions = conditions.map(({ type, status }) => {
      const before = state.conditions.find((c) => c.type === type)?.statuses ?? DEFAULT_STATUSES;
      return { type, statuses: before.includes(status) ? before : [...before, status], current: status };
    });
  }

  setResult(state: ObjectState, result: string): void {
    state.result = result;
    if (!state.results.includes(result)) state.results = [...state.results, result];
  }

  /** A gauge for the registry, its series computed from every object's record on each scrape. */
  gauge(opts: {
    name: string;
    help: string;
    registers: Registry[];
    series: (state: ObjectState, emit: (labels: Record<string, string>, value: number) => void) => void;
  }): void {
    const view = new ComputedGauge(opts.name, opts.help, () => {
      const values: GaugeValue[] = [];
      for (const state of this.#objects.values())
        opts.series(state, (labels, value) => values.push({ labels, value }));
      return values;
    });
    // The registry takes prom-client's own metric classes; it calls only what this one has.
    for (const registry of opts.registers) registry.registerMetric(view as unknown as Gauge<string>);
  }
}

class ComputedGauge {
  readonly type = 'gauge' as const;
  readonly aggregator = 'sum' as const;
  readonly name: string;
  readonly help: string;
  readonly #values: () => GaugeValue[];

  constructor(name: string, help: string, values: () => GaugeValue[]) {
    this.name = name;
    this.help = help;
    this.#values = values;
  }

  async get(): Promise<{
    name: string;
    help: string;
    type: 'gauge';
    aggregator: 'sum';
    values: GaugeValue[];
  }> {
    return {
      name: this.name,
      help: this.help,
      type: this.type,
      aggregator: this.aggregator,
      values: this.#values(),
    };
  }

  getForPromString(): ReturnType<ComputedGauge['get']> {
    return this.get();
  }

  /** Nothing to reset: the series are the objects' records, which their owner clears. */
  reset(): void {}
}

function objectId({ kind, namespace, name }: ObjectLabels): string {
  return `${kind}\u0000${namespace}\u0000${name}`;
}
