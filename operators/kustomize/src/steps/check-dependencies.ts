import { HELM_API_VERSION, KUSTOMIZE_API_VERSION, Reason } from '@mooring/api';
import { type ChainObject, whyBlocked } from '@mooring/kstatus';
import {
  type KubeClient,
  type KubeObject,
  type ObjectCache,
  StalledError,
  WaitingError,
} from '@mooring/runtime';
import { CelError } from '../cel.ts';
import {
  type DependencyNode,
  dependencyKey,
  findDependencyCycle,
  checkDependencies as judge,
  keyOfNode,
  nodeKey,
} from '../dependencies.ts';
import { type KustomizationRun, need } from '../kustomization-run.ts';

/** The API version of each kind a dependsOn entry may name. */
const API_VERSIONS: Record<string, string> = {
  Kustomization: KUSTOMIZE_API_VERSION,
  HelmRelease: HELM_API_VERSION,
};

/**
 * `dependsOn` of a Kustomization or a HelmRelease, on objects of either kind: the whole reachable
 * graph is loaded first (from the informers' cache when the reconcile has one, so a reconcile
 * costs no API call) so the cycle check is synchronous; a cycle or a bad readyExpr stalls, a
 * dependency not ready yet waits at the dependency interval, its message naming the chain that
 * stops it (the sentence `mooring why` prints, from the same cache).
 */
export async function awaitDependencies(
  client: KubeClient,
  obj: DependencyNode,
  opts: { sourceRevision: string | undefined; requeueDependencyMs: number; cache?: ObjectCache },
): Promise<void> {
  const refs = obj.spec.dependsOn ?? [];
  if (refs.length === 0) return;
  const { cache } = opts;
  const fetched = new Map<string, DependencyNode | undefined>();
  const lookup = async (kind: string, namespace: string, name: string) => {
    const key = dependencyKey({ kind: kind as 'Kustomization', namespace, name }, obj);
    if (!fetched.has(key)) {
      const found = cache?.covers(kind, namespace)
        ? (cache.get(kind, namespace, name) as (KubeObject & DependencyNode) | undefined)
        : await client.getOrUndefined<KubeObject & DependencyNode>({
            apiVersion: API_VERSIONS[kind] ?? KUSTOMIZE_API_VERSION,
            kind,
            namespace,
            name,
          });
      // The kind is set on what the API returns; keep it for keys of the next hop.
      fetched.set(key, found ? { ...found, kind } : undefined);
    }
    return fetched.get(key);
  };
  const queue: DependencyNode[] = [obj];
  const seen = new Set([keyOfNode(obj)]);
  while (queue.length) {
    const cur = queue.shift()!;
    for (const d of cur.spec.dependsOn ?? []) {
      const key = dependencyKey(d, cur);
      if (seen.has(key)) continue;
      seen.add(key);
      const dep = await lookup(
        d.kind ?? cur.kind ?? 'Kustomization',
        d.namespace ?? cur.metadata.namespace ?? 'default',
        d.name,
      );
      if (dep) queue.push(dep);
    }
  }
  const self = keyOfNode(obj);
  const cycle = findDependencyCycle(obj, (key) => (key === self ? obj : fetched.get(key)));
  if (cycle) throw new StalledError('DependencyCycle', `dependency cycle: ${cycle.join(' → ')}`);
  const direct = new Map<string, DependencyNode | undefined>();
  for (const d of refs) {
    const key = dependencyKey(d, obj);
    direct.set(key, fetched.get(key));
  }
  // What the chain reads beyond the graph (sources) comes from the cache only; without a copy the
  // edge is not followed (null), never fetched.
  const chainLookup = (kind: string, namespace: string, name: string): ChainObject | undefined | null => {
    const key = nodeKey(kind, namespace, name);
    if (fetched.has(key)) return fetched.get(key) as ChainObject | undefined;
    return cache?.covers(kind, namespace) ? cache.get(kind, namespace, name) : null;
  };
  const explain = (dep: DependencyNode) => whyBlocked(dep as ChainObject, chainLookup)?.sentence;
  let verdict: ReturnType<typeof judge>;
  try {
    verdict = judge(obj, direct, opts.sourceRevision, explain);
  } catch (err) {
    if (err instanceof CelError) throw new StalledError(Reason.InvalidCELExpression, err.message);
    throw err;
  }
  if (!verdict.ready) {
    if (verdict.reason === 'InvalidCELExpression') throw new StalledError(verdict.reason, verdict.message);
    throw new WaitingError(Reason.DependencyNotReady, verdict.message, opts.requeueDependencyMs);
  }
}

/** A Kustomization's `dependsOn`: on the same source, a dependency must have applied this revision. */
export async function checkDependencies(run: KustomizationRun): Promise<undefined> {
  const { obj } = run;
  if ((obj.spec.dependsOn ?? []).length === 0) return undefined;
  await awaitDependencies(run.deps.client, obj as DependencyNode, {
    sourceRevision: need(run.source, 'the source').artifact.revision,
    requeueDependencyMs: run.deps.requeueDependencyMs,
    cache: run.ctx.cache,
  });
  return undefined;
}
