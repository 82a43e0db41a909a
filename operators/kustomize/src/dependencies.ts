import type { Kustomization } from '@mooring/api';
import { CelError, compileExpression } from './cel.ts';
import { sourceKey } from './source-ref.ts';

export type DependencyVerdict =
  | { ready: true }
  | { ready: false; reason: 'DependencyNotReady' | 'InvalidCELExpression'; message: string };

const keyOf = (o: Kustomization) => `${o.metadata.namespace}/${o.metadata.name}`;

function builtInCheck(
  self: Kustomization,
  dep: Kustomization,
  sourceRevision: string | undefined,
): string | undefined {
  if (dep.status?.observedGeneration !== dep.metadata.generation)
    return 'its latest generation is not reconciled yet';
  const ready = dep.status?.conditions?.find((c) => c.type === 'Ready');
  if (ready?.status !== 'True')
    return ready ? `Ready is ${ready.status}: ${ready.message}` : 'it has not reported Ready yet';
  const a = sourceKey(self);
  const b = sourceKey(dep);
  // On the same source, the dependency must have applied the revision this one is about to apply.
  if (sourceRevision && a.kind === b.kind && a.namespace === b.namespace && a.name === b.name) {
    if (dep.status?.lastAppliedRevision !== sourceRevision)
      return `revision ${sourceRevision} is not applied yet`;
  }
  return undefined;
}

/**
 * Flux's dependency rule: each dependency exists, has reconciled its latest generation, is Ready,
 * and on the same source has applied the same revision; a `readyExpr` (CEL over `dep` and `self`)
 * replaces that check for its dependency.
 */
export function checkDependencies(
  self: Kustomization,
  dependencies: Map<string, Kustomization | undefined>,
  sourceRevision: string | undefined,
): DependencyVerdict {
  for (const ref of self.spec.dependsOn ?? []) {
    const key = `${ref.namespace ?? self.metadata.namespace}/${ref.name}`;
    const dep = dependencies.get(key);
    if (!dep) return { ready: false, reason: 'DependencyNotReady', message: `dependency '${key}' not found` };
    if (ref.readyExpr) {
      let ok: boolean;
      try {
        ok = compileExpression(ref.readyExpr).evaluate({ dep, self });
      } catch (err) {
        if (err instanceof CelError)
          return { ready: false, reason: 'InvalidCELExpression', message: err.message };
        throw err;
      }
      if (!ok) {
        return {
          ready: false,
          reason: 'DependencyNotReady',
          message: `dependency '${key}' is not ready: readyExpr is false`,
        };
      }
      continue;
    }
    const why = builtInCheck(self, dep, sourceRevision);
    if (why)
      return {
        ready: false,
        reason: 'DependencyNotReady',
        message: `dependency '${key}' is not ready: ${why}`,
      };
  }
  return { ready: true };
}

/** A dependsOn chain that comes back to `self` (`a → b → a`), or undefined; other cycles are theirs to report. */
export function findDependencyCycle(
  self: Kustomization,
  lookup: (key: string) => Kustomization | undefined,
): string[] | undefined {
  const start = keyOf(self);
  const path: string[] = [start];
  const visited = new Set<string>();
  const visit = (obj: Kustomization): string[] | undefined => {
    for (const ref of obj.spec.dependsOn ?? []) {
      const key = `${ref.namespace ?? obj.metadata.namespace}/${ref.name}`;
      if (key === start) return [...path, key];
      if (visited.has(key)) continue;
      visited.add(key);
      const next = key === start ? self : lookup(key);
      if (!next) continue;
      path.push(key);
      const found = visit(next);
      if (found) return found;
      path.pop();
    }
    return undefined;
  };
  return visit(self);
}
