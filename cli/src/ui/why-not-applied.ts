import type { KubeObject } from '@mooring/runtime';
import { readyCondition } from '../object-status.ts';

/** An object by kind, namespace and name, as the index holds it; undefined when it does not exist. */
export type ObjectLookup = (kind: string, namespace: string, name: string) => KubeObject | undefined;

/** The kstatus of one applied object, for health checks that still wait. */
export interface AppliedHealth {
  kind: string;
  namespace: string;
  name: string;
  status: string;
  message: string;
}

/** The one sentence and the object it blames (to link to), or undefined when the object is Ready. */
export interface Explanation {
  sentence: string;
  blocking?: { kind: string; namespace: string; name: string };
}

interface Ref {
  kind?: string;
  name: string;
  namespace?: string;
}

const idOf = (kind: string, namespace: string, name: string): string => `${kind} ${namespace}/${name}`;
const said = (obj: KubeObject): string => {
  const ready = readyCondition(obj);
  if (!ready) return 'it has not been reconciled yet (is its operator running?)';
  const message = (ready.message ?? '').replace(/\s+/g, ' ').trim();
  return `${ready.reason ?? 'NotReady'}${message ? `: ${message}` : ''}`;
};
const isReady = (obj: KubeObject): boolean => readyCondition(obj)?.status === 'True';
const isSuspended = (obj: KubeObject): boolean =>
  Boolean((obj.spec as { suspend?: boolean } | undefined)?.suspend);

// The kind a dependsOn entry names: its own kind unless it says otherwise (a HelmRelease may
// depend on a Kustomization and the other way round).
function dependencyKind(obj: KubeObject, ref: Ref): string {
  return ref.kind ?? obj.kind;
}

/**
 * Follows dependsOn to the first dependency that is not Ready, and on through its own dependencies,
 * so the sentence names the object at the root of the wait, not the next one in line.
 */
function blockingDependency(
  obj: KubeObject,
  lookup: ObjectLookup,
  seen: Set<string>,
): { ref: { kind: string; namespace: string; name: string }; object: KubeObject | undefined } | undefined {
  const namespace = obj.metadata.namespace ?? '';
  const deps = ((obj.spec as { dependsOn?: Ref[] } | undefined)?.dependsOn ?? []) as Ref[];
  for (const dep of deps) {
    const ref = { kind: dependencyKind(obj, dep), namespace: dep.namespace ?? namespace, name: dep.name };
    const id = idOf(ref.kind, ref.namespace, ref.name);
    if (seen.has(id)) continue;
    seen.add(id);
    const found = lookup(ref.kind, ref.namespace, ref.name);
    if (!found) return { ref, object: undefined };
    if (isReady(found)) continue;
    return blockingDependency(found, lookup, seen) ?? { ref, object: found };
  }
  return undefined;
}

/**
 * "Why is this not applied?": one sentence naming the blocking edge of an object that is not Ready:
 * suspended, its source missing or failing, a dependency not Ready (and that one's own reason), a
 * health check still waiting on an applied object, or its own failure. Pure over what the caller
 * looked up, so it is tested on objects as the operators write them.
 */
export function whyNotApplied(
  obj: KubeObject,
  lookup: ObjectLookup,
  health: readonly AppliedHealth[] = [],
): Explanation | undefined {
  const namespace = obj.metadata.namespace ?? '';
  const self = idOf(obj.kind, namespace, obj.metadata.name ?? '');
  if (isSuspended(obj))
    return { sentence: `${self} is suspended, so nothing is applied until it is resumed.` };
  if (isReady(obj)) return undefined;

  const sourceRef =
    (obj.spec as { sourceRef?: Ref; chart?: { spec?: { sourceRef?: Ref } } } | undefined)?.sourceRef ??
    (obj.spec as { chart?: { spec?: { sourceRef?: Ref } } } | undefined)?.chart?.spec?.sourceRef;
  if (sourceRef?.kind) {
    const ref = { kind: sourceRef.kind, namespace: sourceRef.namespace ?? namespace, name: sourceRef.name };
    const source = lookup(ref.kind, ref.namespace, ref.name);
    const sourceId = idOf(ref.kind, ref.namespace, ref.name);
    if (!source)
      return { sentence: `${self} waits for its source ${sourceId}, which does not exist.`, blocking: ref };
    if (isSuspended(source) && !isReady(source))
      return { sentence: `${self} waits for its source ${sourceId}, which is suspended.`, blocking: ref };
    if (!isReady(source))
      return {
        sentence: `${self} waits for its source ${sourceId}, which failed: ${said(source)}.`,
        blocking: ref,
      };
  }

  const dep = blockingDependency(obj, lookup, new Set([self]));
  if (dep) {
    const depId = idOf(dep.ref.kind, dep.ref.namespace, dep.ref.name);
    if (!dep.object)
      return { sentence: `${self} depends on ${depId}, which does not exist.`, blocking: dep.ref };
    const why = isSuspended(dep.object) ? 'is suspended' : `is not Ready (${said(dep.object)})`;
    return { sentence: `${self} depends on ${depId}, which ${why}.`, blocking: dep.ref };
  }

  const ready = readyCondition(obj);
  const waiting = health.find((h) => h.status !== 'Current');
  if (waiting && (ready?.status !== 'False' || /health/i.test(ready.reason ?? ready.message ?? ''))) {
    const target = { kind: waiting.kind, namespace: waiting.namespace, name: waiting.name };
    return {
      sentence: `${self} waits for the health check of ${idOf(waiting.kind, waiting.namespace, waiting.name)}: ${waiting.status}${waiting.message ? `, ${waiting.message}` : ''}.`,
      blocking: target,
    };
  }
  if (!ready) return { sentence: `${self} has not been reconciled yet: is its operator running?` };
  if (ready.status === 'Unknown') return { sentence: `${self} is being reconciled: ${said(obj)}.` };
  return { sentence: `${self} failed: ${said(obj)}.` };
}
