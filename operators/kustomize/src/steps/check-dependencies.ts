import { KUSTOMIZE_API_VERSION, type Kustomization, Reason } from '@mooring/api';
import { StalledError, WaitingError } from '@mooring/runtime';
import { CelError } from '../cel.ts';
import { findDependencyCycle, checkDependencies as judge } from '../dependencies.ts';
import { type KustomizationRun, need } from '../kustomization-run.ts';

const keyOf = (o: Kustomization) => `${o.metadata.namespace}/${o.metadata.name}`;

/**
 * `dependsOn`: the whole reachable graph is loaded first so the cycle check is synchronous; a
 * cycle or a bad readyExpr stalls, a dependency not ready yet waits at the dependency interval.
 */
export async function checkDependencies(run: KustomizationRun): Promise<undefined> {
  const { obj } = run;
  const refs = obj.spec.dependsOn ?? [];
  if (refs.length === 0) return undefined;
  const revision = need(run.source, 'the source').artifact.revision;
  const fetched = new Map<string, Kustomization | undefined>();
  const lookup = async (key: string) => {
    if (!fetched.has(key)) {
      const [namespace, name] = key.split('/') as [string, string];
      fetched.set(
        key,
        await run.deps.client.getOrUndefined<Kustomization>({
          apiVersion: KUSTOMIZE_API_VERSION,
          kind: 'Kustomization',
          namespace,
          name,
        }),
      );
    }
    return fetched.get(key);
  };
  const queue = [obj];
  const seen = new Set([keyOf(obj)]);
  while (queue.length) {
    const cur = queue.shift()!;
    for (const d of cur.spec.dependsOn ?? []) {
      const key = `${d.namespace ?? cur.metadata.namespace}/${d.name}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const dep = await lookup(key);
      if (dep) queue.push(dep);
    }
  }
  const cycle = findDependencyCycle(obj, (key) => (key === keyOf(obj) ? obj : fetched.get(key)));
  if (cycle) throw new StalledError('DependencyCycle', `dependency cycle: ${cycle.join(' → ')}`);
  const direct = new Map<string, Kustomization | undefined>();
  for (const d of refs) {
    const key = `${d.namespace ?? obj.metadata.namespace}/${d.name}`;
    direct.set(key, fetched.get(key));
  }
  let verdict: ReturnType<typeof judge>;
  try {
    verdict = judge(obj, direct, revision);
  } catch (err) {
    if (err instanceof CelError) throw new StalledError(Reason.InvalidCELExpression, err.message);
    throw err;
  }
  if (!verdict.ready) {
    if (verdict.reason === 'InvalidCELExpression') throw new StalledError(verdict.reason, verdict.message);
    throw new WaitingError(Reason.DependencyNotReady, verdict.message, run.deps.requeueDependencyMs);
  }
  return undefined;
}
