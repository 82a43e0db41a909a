import type { Histogram, Registry } from 'prom-client';

type Labels<L extends string> = Record<L, string>;

interface Series<L extends string> {
  labels: Labels<L>;
  /** Per bucket the observations that fell in it (not cumulative), then the count, then the sum. */
  counts: Float64Array;
}

/** One printed line, in the shape prom-client's registry formats. */
export interface ExportedValue {
  labels: Record<string, string | number>;
  sharedLabels?: Record<string, string>;
  value: number;
  metricName: string;
  /** Always none (no exemplars here); present because prom-client's JSON has the key. */
  exemplar?: null | undefined;
}

export interface ExportedHistogram {
  name: string;
  help: string;
  type: 'histogram';
  aggregator: 'sum';
  values: ExportedValue[];
}

/**
 * A histogram for series per object (Flux's `gotk_reconcile_duration_seconds`, by kind, name and
 * namespace), printed as prom-client's Histogram prints it. prom-client keeps an object of
 * buckets and a labels object per series, about 7 KB each: at 1,000 Kustomizations that was the
 * largest thing in a converged operator's heap (7.3 MB). This keeps each series' counts in one
 * Float64Array. Written here because prom-client has no compact histogram and the registry needs
 * only `get`/`getForPromString`, `reset` and a name.
 */
export class CompactHistogram<L extends string> {
  readonly name: string;
  readonly help: string;
  readonly type = 'histogram' as const;
  readonly aggregator = 'sum' as const;
  readonly #labelNames: readonly L[];
  readonly #buckets: readonly number[];
  readonly #series = new Map<string, Series<L>>();

  constructor(opts: {
    name: string;
    help: string;
    labelNames: readonly L[];
    buckets: readonly number[];
    registers: Registry[];
  }) {
    this.name = opts.name;
    this.help = opts.help;
    this.#labelNames = opts.labelNames;
    this.#buckets = [...opts.buckets].sort((a, b) => a - b);
    // The registry takes prom-client's own metric classes; it calls only what this one has.
    for (const registry of opts.registers) registry.registerMetric(this as unknown as Histogram<L>);
  }

  observe(labels: Labels<L>, value: number): void {
    const key = this.#key(labels);
    let series = this.#series.get(key);
    if (!series) {
      const own = {} as Labels<L>;
      for (const name of this.#labelNames) own[name] = labels[name];
      series = { labels: own, counts: new Float64Array(this.#buckets.length + 2) };
      this.#series.set(key, series);
    }
    const bucket = this.#buckets.findIndex((bound) => value <= bound);
    if (bucket >= 0) series.counts[bucket]! += 1;
    series.counts[this.#buckets.length]! += 1;
    series.counts[this.#buckets.length + 1]! += value;
  }

  remove(labels: Labels<L>): void {
    this.#series.delete(this.#key(labels));
  }

  reset(): void {
    this.#series.clear();
  }

  /** What the registry prints: the series' labels shared by its bucket, sum and count lines. */
  async getForPromString(): Promise<ExportedHistogram> {
    const values: ExportedValue[] = [];
    const n = this.#buckets.length;
    for (const { labels, counts } of this.#series.values()) {
      let cumulative = 0;
      for (let i = 0; i < n; i++) {
        cumulative += counts[i]!;
        values.push({
          labels: { le: this.#buckets[i]! },
          sharedLabels: labels,
          value: cumulative,
          metricName: `${this.name}_bucket`,
          exemplar: null,
        });
      }
      values.push(
        {
          labels: { le: '+Inf' },
          sharedLabels: labels,
          value: counts[n]!,
          metricName: `${this.name}_bucket`,
          exemplar: null,
        },
        {
          labels: {},
          sharedLabels: labels,
          value: counts[n + 1]!,
          metricName: `${this.name}_sum`,
          exemplar: undefined,
        },
        {
          labels: {},
          sharedLabels: labels,
          value: counts[n]!,
          metricName: `${this.name}_count`,
          exemplar: undefined,
        },
      );
    }
    return {
      name: this.name,
      help: this.help,
      type: this.type,
      values,
      aggregator: this.aggregator,
    };
  }

  /** As JSON (`Registry.getMetricsAsJSON`): each value's labels with the series' own. */
  async get(): Promise<ExportedHistogram> {
    const data = await this.getForPromString();
    return {
      ...data,
      values: data.values.map(({ sharedLabels, labels, ...rest }) => ({
        ...rest,
        labels: { ...labels, ...sharedLabels },
      })),
    };
  }

  #key(labels: Labels<L>): string {
    return this.#labelNames.map((name) => labels[name]).join('\u0000');
  }
}
