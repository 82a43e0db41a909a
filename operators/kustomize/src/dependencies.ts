import type { DependencyReference } from '@mooring/api';
import { CelError, compileExpression } from './cel.ts';
import { type SourceReader, sourceKey } from './source-ref.ts';

export type DependencyVerdict =
  | { ready: true }
  | { ready: false; reason: 'DependencyNotReady' | 'InvalidCELExpression'; message: string };

/** What dependsOn reads of an object: a Kustomization or a HelmRelease, on either side. */
export interface DependencyNode {
  kind?: string;
  metadata: { name?: string; namespace?: string; generation?: number };
  spec: { dependsOn?: DependencyReference[]; sourceRef?: SourceReader['spec']['sourceRef'] };
  status?: {
    observedGeneration?: number;
    lastAppliedRevision?: string;
    conditions?: { type: string; status: string; message?: string; observedGeneration?: number }[];
  };
}

const kindOf = (o: DependencyNode) => o.kind ?? 'Kustomization';

/**
 * The key of a node in the dependency graph: `namespace/name` for a Kustomization (as the messages
 * always said), `HelmRelease/namespace/name` for a HelmRelease, so the two kinds never collide.
 */
export function nodeKey(kind: string, namespace: string | undefined, name: string | undefined): string {
  const id = `${namespace}/${name}`;
  return kind === 'Kustomization' ? id : `${kind}/${id}`;
}

/** The key of a dependsOn entry of `from`: its kind is `from`'s unless it names one. */
export function dependencyKey(ref: DependencyReference, from: DependencyNode): string {
  return nodeKey(ref.kind ?? kindOf(from), ref.namespace ?? from.metadata.namespace, ref.name);
}

export const keyOfNode = (o: DependencyNode) => nodeKey(kindOf(o), o.metadata.namespace, o.metadata.name);

function builtInCheck(
  self: DependencyNode,
  dep: DependencyNode,
  sourceRevision: string | undefined,
): string | undefined {
  if (dep.status?.observedGeneration !== dep.metadata.generation)
    return 'its latest generation is not reconciled yet';
  const ready = dep.status?.conditions?.find((c) => c.type === 'Ready');
  if (ready?.status !== 'True')
    return ready ? `Ready is ${ready.status}: ${ready.message}` : 'it has not reported Ready yet';
  if (!self.spec.sourceRef || !dep.spec.sourceRef) return undefined;
  const a = sourceKey(self as SourceReader);
  const b = sourceKey(dep as SourceReader);
  // On the same source, the dependency must have applied the revision this one is about to apply.
  if (sourceRevision && a.kind === b.kind && a.namespace === b.namespace && a.name === b.name) {
    if (dep.status?.lastAppliedRevision !== sourceRevision)
      return `revision ${sourceRevision} is not applied yet`;
  }
  return undefined;
}

/**
 * Flux's dependency rule: each dependency exists, has reconciled its latest generation, is Ready,
 * and (two Kustomizations) on the same source has applied the same revision; a `readyExpr` (CEL
 * over `dep` and `self`) replaces that check for its dependency. A dependency may be of the other
 * kind (a Kustomization on a HelmRelease and back), keyed by `dependencyKey`.
 */
export function checkDependencies(
  self: DependencyNode,
  dependencies: Map<string, DependencyNode | undefined>,
  sourceRevision: string | undefined,
  /** The chain that stops a dependency that is not Ready, to say instead of its Ready message. */
  explain: (dep: DependencyNode) => string | undefined = () => undefined,
): DependencyVerdict {
  for (const ref of self.spec.dependsOn ?? []) {
    const key = dependencyKey(ref, self);
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
    // A Ready condition about this generation that is not True: say the chain that stops it.
    const ready = dep.status?.conditions?.find((c) => c.type === 'Ready');
    const current =
      ready?.observedGeneration === undefined || ready.observedGeneration === dep.metadata.generation;
    const why = builtInCheck(self, dep, sourceRevision);
    const chain = why && ready && ready.status !== 'True' && current ? explain(dep) : undefined;
    if (chain)
      return {
        ready: false,
        reason: 'DependencyNotReady',
        message: `dependency '${key}' is not ready: ${chain}`,
      };
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
  self: DependencyNode,
  lookup: (key: string) => DependencyNode | undefined,
): string[] | undefined {
  const start = keyOfNode(self);
  const path: string[] = [start];
  const visited = new Set<string>();
  const visit = (obj: DependencyNode): string[] | undefined => {
    for (const ref of obj.spec.dependsOn ?? []) {
      const key = dependencyKey(ref, obj);
      if (key === start) return [...path, key];
      if (visited.has(key)) continue;
      visited.add(key);
      const next = lookup(key);
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

/**
 * The keys of `objects` (of kind `selfKind`) that depend on `changed` (of kind `changedKind`), for
 * the watch that requeues a dependent when its dependency's readiness changes.
 */
export function dependentsOf(
  changedKind: string,
  changed: { metadata: { namespace?: string; name?: string } },
  objects: readonly DependencyNode[],
  selfKind: string,
): string[] {
  const key = nodeKey(changedKind, changed.metadata.namespace, changed.metadata.name);
  return objects
    .filter((o) =>
      (o.spec.dependsOn ?? []).some((d) => dependencyKey(d, { ...o, kind: o.kind ?? selfKind }) === key),
    )
    .map((o) => `${o.metadata.namespace}/${o.metadata.name}`);
}
