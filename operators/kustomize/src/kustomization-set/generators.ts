import type { Generator, LabelSelector, LeafGenerator } from '@mooring/api';
import { CLUSTER_SECRET_LABEL } from '@mooring/api';
import { directoryElements, fileElements, type ReadArtifact } from './artifact-generators.ts';
import type { Params } from './template.ts';

/** One parameter set a generator produced. */
export interface Element {
  params: Params;
  /** What rollout step selectors match: a cluster's Secret labels, a list element's `labels`. */
  labels: Record<string, string>;
  /** The cluster Secret it came from, for the circuit breaker and the Secret's finalizer. */
  clusterSecret?: string;
}

/** A cluster Secret as the clusters generator reads it. */
export interface ClusterSecret {
  name: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  /** Being deleted: the cluster leaves the fleet, its Secret stays until its objects are pruned. */
  deleting: boolean;
}

/** Where generators read from: cluster Secrets and source artifacts (the API server and the ArtifactCache). */
export interface GeneratorInputs {
  listClusters: () => Promise<ClusterSecret[]>;
  readArtifact: ReadArtifact;
}

/** A generator that cannot produce elements: which one and why. */
export class GeneratorError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GeneratorError';
  }
}

/** Whether `labels` satisfy a Kubernetes label selector; an absent selector matches everything. */
export function matchesLabelSelector(
  selector: LabelSelector | undefined,
  labels: Record<string, string>,
): boolean {
  if (!selector) return true;
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (labels[k] !== v) return false;
  for (const req of selector.matchExpressions ?? []) {
    const has = Object.hasOwn(labels, req.key);
    const values = req.values ?? [];
    switch (req.operator) {
      case 'In':
        if (!has || !values.includes(labels[req.key]!)) return false;
        break;
      case 'NotIn':
        if (has && values.includes(labels[req.key]!)) return false;
        break;
      case 'Exists':
        if (!has) return false;
        break;
      case 'DoesNotExist':
        if (has) return false;
        break;
      default:
        throw new GeneratorError(
          `selector operator ${req.operator} is not one of In, NotIn, Exists, DoesNotExist`,
        );
    }
  }
  return true;
}

function stringLabels(value: unknown): Record<string, string> {
  if (!value || typeof value !== 'object') return {};
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, String(v)]));
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** `b` deep-merged over `a`: maps merge, anything else in `b` wins. */
function mergeParams(a: Params, b: Params): Params {
  const out: Record<string, unknown> = { ...a };
  for (const [k, v] of Object.entries(b))
    out[k] = isObject(out[k]) && isObject(v) ? mergeParams(out[k], v) : v;
  return out;
}

function mergeElements(a: Element, b: Element): Element {
  return {
    params: mergeParams(a.params, b.params),
    labels: { ...a.labels, ...b.labels },
    clusterSecret: b.clusterSecret ?? a.clusterSecret,
  };
}

function valueAt(params: Params, path: string): unknown {
  let cur: unknown = params;
  for (const part of path.split('.')) cur = isObject(cur) ? cur[part] : undefined;
  return cur;
}

async function leaf(gen: LeafGenerator, inputs: GeneratorInputs): Promise<Element[]> {
  const kinds = Object.keys(gen).filter((k) => gen[k as keyof LeafGenerator] !== undefined);
  if (kinds.length !== 1)
    throw new GeneratorError(
      `a generator names exactly one kind; this one has ${kinds.join(', ') || 'none'}`,
    );
  if (gen.list) {
    return gen.list.elements.map((e) => ({ params: e, labels: stringLabels(e.labels) }));
  }
  if (gen.directories)
    return (await directoryElements(gen.directories, inputs.readArtifact)).map((params) => ({
      params,
      labels: {},
    }));
  if (gen.files)
    return (await fileElements(gen.files, inputs.readArtifact)).map((params) => ({
      params,
      labels: stringLabels(params.labels),
    }));
  const spec = gen.clusters!;
  const secrets = await inputs.listClusters();
  return secrets
    .filter((s) => !s.deleting && matchesLabelSelector(spec.selector, s.labels))
    .map((s) => ({
      params: {
        cluster: {
          name: s.labels[CLUSTER_SECRET_LABEL] || s.name,
          secretName: s.name,
          labels: s.labels,
          annotations: s.annotations,
        },
        ...(spec.values ? { values: spec.values } : {}),
      },
      labels: s.labels,
      clusterSecret: s.name,
    }));
}

/** The elements of one generator (matrix and merge over leaf generators). */
export async function generate(gen: Generator, inputs: GeneratorInputs): Promise<Element[]> {
  if (gen.matrix) {
    const [a, b] = gen.matrix.generators;
    const left = await leaf(a!, inputs);
    const right = await leaf(b!, inputs);
    return left.flatMap((l) => right.map((r) => mergeElements(l, r)));
  }
  if (gen.merge) {
    const [first, ...rest] = gen.merge.generators;
    const keys = gen.merge.mergeKeys;
    const keyOf = (e: Element) => JSON.stringify(keys.map((k) => valueAt(e.params, k) ?? null));
    let base = await leaf(first!, inputs);
    for (const g of rest) {
      const overlay = new Map((await leaf(g, inputs)).map((e) => [keyOf(e), e]));
      base = base.map((e) => {
        const o = overlay.get(keyOf(e));
        return o ? mergeElements(e, o) : e;
      });
    }
    return base;
  }
  return leaf(gen, inputs);
}

/** Every generator's elements, concatenated in order. */
export async function generateAll(gens: readonly Generator[], inputs: GeneratorInputs): Promise<Element[]> {
  const out: Element[] = [];
  for (const [i, g] of gens.entries()) {
    try {
      out.push(...(await generate(g, inputs)));
    } catch (err) {
      throw new GeneratorError(`generator ${i + 1}: ${(err as Error).message}`);
    }
  }
  return out;
}
