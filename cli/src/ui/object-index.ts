import { KINDS, type KindDefinition } from '@mooring/api';
import { Informer, type KubeClient, type KubeObject } from '@mooring/runtime';
import { apiVersionOf } from '../kinds.ts';
import { type ObjectRow, rowOf, STATES } from './object-row.ts';
import { rowMatchesSearch } from './row-search.ts';

/** A change the page hears about: the row as it is now, or its key when the object is gone. */
export interface RowChange {
  type: 'upsert' | 'delete';
  key: string;
  row: ObjectRow;
}

/** What the overview asks for: filters, a search word and a page. */
export interface RowQuery {
  namespace?: string;
  kind?: string;
  state?: string;
  /** `key=value,key2=value2` or `key`: every one must match the object's labels. */
  label?: string;
  search?: string;
  offset?: number;
  limit?: number;
}

/** One page of rows and the counts of the whole (filtered) set, by state and by kind. */
export interface RowPage {
  total: number;
  offset: number;
  rows: ObjectRow[];
  counts: { state: Record<string, number>; kind: Record<string, number> };
  namespaces: string[];
  kinds: string[];
  /** Kinds the user may not list, with the API server's answer. */
  unavailable: Record<string, string>;
}

export const MAX_PAGE = 500;

/** `Kind/namespace/name`: the key of an object across kinds. */
export const rowKey = (kind: string, namespace: string, name: string): string =>
  `${kind}/${namespace}/${name}`;

/** Equality-based label selector terms (`a=b`, `a!=b`, `a`), as kubectl's `-l` reads them. */
export function labelMatcher(
  selector: string | undefined,
): ((labels: Record<string, string>) => boolean) | undefined {
  const terms = (selector ?? '')
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean)
    .map((t) => {
      const m = /^([^=!]+?)\s*(!=|==|=)\s*(.*)$/.exec(t);
      return m ? { key: m[1]!, op: m[2]!, value: m[3]! } : { key: t, op: 'exists', value: '' };
    });
  if (terms.length === 0) return undefined;
  return (labels) =>
    terms.every(({ key, op, value }) =>
      op === 'exists' ? key in labels : op === '!=' ? labels[key] !== value : labels[key] === value,
    );
}

/**
 * One list+watch per Mooring kind (the kind table, so new kinds appear by themselves), as the
 * user; the page asks it for filtered pages and hears of changes, so it never lists the world.
 */
export class ObjectIndex {
  readonly #informers = new Map<string, { def: KindDefinition; informer: Informer }>();
  readonly #listeners = new Set<(change: RowChange) => void>();
  readonly #unavailable = new Map<string, string>();
  // Settled by a kind's first error (forbidden, or a CRD not installed), so start() need not wait for it.
  readonly #firstError = new Map<string, () => void>();
  readonly #failed = new Map<string, Promise<void>>();

  constructor(client: KubeClient, namespace: string | undefined, kinds: readonly KindDefinition[] = KINDS) {
    for (const def of kinds) {
      const informer = new Informer(client, {
        apiVersion: apiVersionOf(def),
        kind: def.kind,
        namespace,
        watchTimeoutSeconds: 240,
        onError: (err) => {
          this.#unavailable.set(def.kind, err.message);
          this.#firstError.get(def.kind)?.();
        },
      });
      this.#failed.set(
        def.kind,
        new Promise((resolve) => {
          this.#firstError.set(def.kind, resolve);
        }),
      );
      informer.on((ev) => {
        this.#unavailable.delete(def.kind);
        const row = rowOf(def, ev.object);
        const change: RowChange = {
          type: ev.type === 'deleted' ? 'delete' : 'upsert',
          key: rowKey(row.kind, row.namespace, row.name),
          row,
        };
        for (const listener of this.#listeners) listener(change);
      });
      this.#informers.set(def.kind, { def, informer });
    }
  }

  /**
   * Starts every watch; resolves when each kind has listed once or failed to (RBAC may forbid
   * some, a cluster may lack a CRD): those keep retrying and show as not readable meanwhile.
   */
  async start(): Promise<void> {
    await Promise.all(
      [...this.#informers.entries()].map(([kind, { informer }]) =>
        Promise.race([informer.start(), this.#failed.get(kind)]),
      ),
    );
  }

  async stop(): Promise<void> {
    await Promise.all([...this.#informers.values()].map(({ informer }) => informer.stop()));
  }

  /** Calls `listener` on every change until the returned function is called. */
  subscribe(listener: (change: RowChange) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  definition(kind: string): KindDefinition | undefined {
    return this.#informers.get(kind)?.def;
  }

  /** The cached object, or undefined when the index does not hold it. */
  get(kind: string, namespace: string, name: string): KubeObject | undefined {
    return this.#informers.get(kind)?.informer.get(namespace ? `${namespace}/${name}` : name);
  }

  /** Every cached object of every kind with its definition. */
  *all(): Generator<{ def: KindDefinition; object: KubeObject }> {
    for (const { def, informer } of this.#informers.values())
      for (const object of informer.list()) yield { def, object };
  }

  /** The rows that match `q`, failing first, then by kind, namespace and name; one page of them. */
  query(q: RowQuery): RowPage {
    const labels = labelMatcher(q.label);
    const rows: ObjectRow[] = [];
    const namespaces = new Set<string>();
    const counts = { state: {} as Record<string, number>, kind: {} as Record<string, number> };
    for (const { def, object } of this.all()) {
      const row = rowOf(def, object);
      namespaces.add(row.namespace);
      if (q.namespace && row.namespace !== q.namespace) continue;
      if (q.kind && row.kind !== q.kind) continue;
      if (labels && !labels(object.metadata.labels ?? {})) continue;
      if (!rowMatchesSearch(row, q.search)) continue;
      counts.kind[row.kind] = (counts.kind[row.kind] ?? 0) + 1;
      counts.state[row.state] = (counts.state[row.state] ?? 0) + 1;
      if (q.state && row.state !== q.state) continue;
      rows.push(row);
    }
    const rank = (s: string): number => STATES.indexOf(s as (typeof STATES)[number]);
    rows.sort(
      (a, b) =>
        rank(a.state) - rank(b.state) ||
        a.kind.localeCompare(b.kind) ||
        a.namespace.localeCompare(b.namespace) ||
        a.name.localeCompare(b.name),
    );
    const offset = Math.max(0, q.offset ?? 0);
    const limit = Math.min(MAX_PAGE, Math.max(1, q.limit ?? 100));
    return {
      total: rows.length,
      offset,
      rows: rows.slice(offset, offset + limit),
      counts,
      namespaces: [...namespaces].sort(),
      kinds: [...this.#informers.keys()],
      // A kind that listed once and then lost a watch is still served from its cache: only kinds
      // never listed (forbidden, CRD missing) are reported.
      unavailable: Object.fromEntries(
        [...this.#unavailable].filter(([kind]) => !this.#informers.get(kind)?.informer.hasSynced()),
      ),
    };
  }
}
