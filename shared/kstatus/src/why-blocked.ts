// "Why is this blocked?" for Kustomizations and HelmReleases: the chain from an object to what
// stops it, shared by `mooring why`, the web UI and the operator's DependencyNotReady message.
// Pure over what the caller looked up (a watch cache, or objects the CLI fetched).

/** A Mooring object as the API server returns it, read only where the chain needs it. */
export interface ChainObject {
  kind?: string;
  metadata: { name?: string; namespace?: string; labels?: Record<string, string> };
  spec?: unknown;
  status?: unknown;
}

export interface ObjectRef {
  kind: string;
  namespace: string;
  name: string;
}

/** The kstatus of one applied object, for health checks that still wait. */
export interface AppliedHealth extends ObjectRef {
  status: string;
  message: string;
}

/**
 * An object by kind, namespace and name: undefined when it does not exist, null when the caller
 * holds no copy of that kind (the edge is then not followed rather than reported missing).
 */
export type ChainLookup = (kind: string, namespace: string, name: string) => ChainObject | undefined | null;

/** The health of what an object applied and waits on; undefined when the caller did not read it. */
export type HealthLookup = (obj: ChainObject) => readonly AppliedHealth[] | undefined;

/** What stops one object: a terminal state, or an edge to the object that stops it in turn. */
export type Blocker =
  | { state: 'suspended' }
  | { state: 'missing' }
  | { state: 'unreconciled' }
  | { state: 'reconciling' | 'failed' | 'budget'; reason: string; message: string }
  | { state: 'health'; object: AppliedHealth }
  | { state: 'set'; set: ObjectRef; phase: string; step?: number; message: string }
  | { state: 'cycle'; dependency: ObjectRef }
  | { state: 'source'; source: ObjectRef; blocker: Blocker }
  | { state: 'dependency'; dependency: ObjectRef; blocker: Blocker };

/** The explanation of an object that is not Ready (or held back). */
export interface WhyBlocked {
  self: ObjectRef;
  blocker: Blocker;
  /** One sentence naming every hop of the chain. */
  sentence: string;
  /** The object at the root of the chain (to link to), when it is not the object itself. */
  blocking?: ObjectRef;
}

/** The reason a prune over the deletion budget reports. */
export const PRUNE_BUDGET_EXCEEDED = 'PruneBudgetExceeded';
/** The label a KustomizationSet puts on the Kustomizations it generates. */
const SET_NAME_LABEL = 'kustomize.mooring.dev/set-name';
// Deep enough for any real chain; a longer one is reported where it was cut.
const MAX_DEPTH = 32;

interface Ref {
  kind?: string;
  name: string;
  namespace?: string;
}
interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

const conditionsOf = (obj: ChainObject) =>
  ((obj.status as { conditions?: Condition[] } | undefined)?.conditions ?? []) as Condition[];
const readyOf = (obj: ChainObject) => conditionsOf(obj).find((c) => c.type === 'Ready');
const isReady = (obj: ChainObject) => readyOf(obj)?.status === 'True';
const isSuspended = (obj: ChainObject) => Boolean((obj.spec as { suspend?: boolean } | undefined)?.suspend);
const oneLine = (s: string | undefined) => (s ?? '').replace(/\s+/g, ' ').trim();
const refOf = (obj: ChainObject, kind: string): ObjectRef => ({
  kind: obj.kind ?? kind,
  namespace: obj.metadata.namespace ?? '',
  name: obj.metadata.name ?? '',
});

/** `Kind namespace/name`, as every sentence names an object. */
export const idOf = (ref: ObjectRef): string => `${ref.kind} ${ref.namespace}/${ref.name}`;

function sourceRefOf(obj: ChainObject): Ref | undefined {
  const spec = obj.spec as
    | { sourceRef?: Ref; chart?: { spec?: { sourceRef?: Ref } }; chartRef?: Ref }
    | undefined;
  if (spec?.sourceRef) return spec.sourceRef;
  if (spec?.chartRef) return spec.chartRef;
  // A HelmRelease's spec.chart is fetched through the HelmChart the operator keeps for it.
  const [namespace, name] = ((obj.status as { helmChart?: string } | undefined)?.helmChart ?? '').split('/');
  if (namespace && name) return { kind: 'HelmChart', namespace, name };
  return spec?.chart?.spec?.sourceRef;
}

function ownState(obj: ChainObject): Blocker {
  const ready = readyOf(obj);
  if (!ready) return { state: 'unreconciled' };
  const reason = ready.reason ?? 'NotReady';
  const message = oneLine(ready.message);
  if (reason === PRUNE_BUDGET_EXCEEDED) return { state: 'budget', reason, message };
  return { state: ready.status === 'Unknown' ? 'reconciling' : 'failed', reason, message };
}

// A generated Kustomization or HelmRelease its set has not updated yet, because the rollout is paused, failed or
// still at an earlier step.
function setHold(obj: ChainObject, lookup: ChainLookup): Blocker | undefined {
  const setName = obj.metadata.labels?.[SET_NAME_LABEL];
  if (!setName) return undefined;
  const namespace = obj.metadata.namespace ?? '';
  const set = lookup('KustomizationSet', namespace, setName);
  if (!set) return undefined;
  const status = set.status as
    | {
        rollout?: { step?: number; phase?: string; message?: string };
        members?: { kustomization: string; state: string }[];
      }
    | undefined;
  const member = status?.members?.find((m) => m.kustomization === obj.metadata.name);
  const phase = status?.rollout?.phase;
  if (member?.state !== 'Outdated' || !phase || phase === 'Complete') return undefined;
  if (isSuspended(set))
    return { state: 'set', set: refOf(set, 'KustomizationSet'), phase: 'Suspended', message: '' };
  return {
    state: 'set',
    set: refOf(set, 'KustomizationSet'),
    phase,
    step: status?.rollout?.step,
    message: oneLine(status?.rollout?.message),
  };
}

function explain(
  obj: ChainObject,
  lookup: ChainLookup,
  health: HealthLookup,
  path: readonly string[],
): Blocker | undefined {
  const kind = obj.kind ?? 'Kustomization';
  const namespace = obj.metadata.namespace ?? '';
  if (isSuspended(obj)) return { state: 'suspended' };
  const held = setHold(obj, lookup);
  if (held) return held;
  if (isReady(obj)) return undefined;

  const sourceRef = sourceRefOf(obj);
  if (sourceRef?.kind) {
    const source = {
      kind: sourceRef.kind,
      namespace: sourceRef.namespace ?? namespace,
      name: sourceRef.name,
    };
    const found = lookup(source.kind, source.namespace, source.name);
    if (found === undefined) return { state: 'source', source, blocker: { state: 'missing' } };
    if (found && isSuspended(found) && !isReady(found))
      return { state: 'source', source, blocker: { state: 'suspended' } };
    if (found && !isReady(found)) return { state: 'source', source, blocker: ownState(found) };
  }

  for (const dep of ((obj.spec as { dependsOn?: Ref[] } | undefined)?.dependsOn ?? []) as Ref[]) {
    const ref = { kind: dep.kind ?? kind, namespace: dep.namespace ?? namespace, name: dep.name };
    if (path.includes(idOf(ref))) return { state: 'cycle', dependency: ref };
    const found = lookup(ref.kind, ref.namespace, ref.name);
    if (found === null) continue;
    if (!found) return { state: 'dependency', dependency: ref, blocker: { state: 'missing' } };
    if (path.length >= MAX_DEPTH)
      return isReady(found) ? undefined : { state: 'dependency', dependency: ref, blocker: ownState(found) };
    const why = explain({ ...found, kind: ref.kind }, lookup, health, [...path, idOf(ref)]);
    if (why) return { state: 'dependency', dependency: ref, blocker: why };
  }

  const ready = readyOf(obj);
  if (ready?.reason === PRUNE_BUDGET_EXCEEDED) return ownState(obj);
  const waiting = (health(obj) ?? []).find((h) => h.status !== 'Current');
  if (waiting && (ready?.status !== 'False' || /health/i.test(ready.reason ?? ready.message ?? '')))
    return { state: 'health', object: waiting };
  return ownState(obj);
}

// The verb phrase for one blocker: `top` is the object the sentence is about, so a terminal state
// may say more (what to do) than it does deep in a chain.
function phrase(b: Blocker, top: boolean): string {
  const said = (reason: string, message: string) => `${reason}${message ? `: ${message}` : ''}`;
  switch (b.state) {
    case 'suspended':
      return top ? 'is suspended, so nothing is applied until it is resumed' : 'is suspended';
    case 'missing':
      return 'does not exist';
    case 'unreconciled':
      return top
        ? 'has not been reconciled yet: is its operator running?'
        : 'has not been reconciled yet (is its operator running?)';
    case 'reconciling':
      return top
        ? `is being reconciled: ${said(b.reason, b.message)}`
        : `is not Ready (${said(b.reason, b.message)})`;
    case 'failed':
      return top ? `failed: ${said(b.reason, b.message)}` : `is not Ready (${said(b.reason, b.message)})`;
    case 'budget':
      return `is held by its deletion budget: ${said(b.reason, b.message)}`;
    case 'health': {
      const h = b.object;
      return `waits for the health check of ${idOf(h)}: ${h.status}${h.message ? `, ${h.message}` : ''}`;
    }
    case 'set': {
      const where =
        b.phase === 'Progressing'
          ? `whose rollout has not reached its step yet (at step ${b.step ?? '?'})`
          : `whose rollout is ${b.phase.toLowerCase()}`;
      return `is held back by ${idOf(b.set)}, ${where}${b.message ? `: ${b.message}` : ''}`;
    }
    case 'cycle':
      return `depends on ${idOf(b.dependency)} again: a dependency cycle`;
    case 'source': {
      const s = b.blocker;
      const what =
        s.state === 'missing' || s.state === 'suspended'
          ? phrase(s, false)
          : s.state === 'unreconciled'
            ? 'failed: it has not been reconciled yet (is its operator running?)'
            : s.state === 'failed' || s.state === 'reconciling' || s.state === 'budget'
              ? `failed: ${said(s.reason, s.message)}`
              : phrase(s, false);
      return `waits for its source ${idOf(b.source)}, which ${what}`;
    }
    case 'dependency':
      return `depends on ${idOf(b.dependency)}, which ${phrase(b.blocker, false)}`;
  }
}

/** The object at the root of a chain: the last one an edge names. */
function rootOf(b: Blocker): ObjectRef | undefined {
  if (b.state === 'dependency') return rootOf(b.blocker) ?? b.dependency;
  if (b.state === 'source') return b.source;
  if (b.state === 'health')
    return { kind: b.object.kind, namespace: b.object.namespace, name: b.object.name };
  if (b.state === 'set') return b.set;
  if (b.state === 'cycle') return b.dependency;
  return undefined;
}

/**
 * The chain of what stops `obj`: suspended (itself or the set that generated it), its source
 * missing or failing, a dependency not Ready (followed recursively, a cycle named), a health check
 * still waiting on a named object, a prune over its deletion budget, or its own failure. Undefined
 * when it is Ready and nothing holds it back.
 */
export function whyBlocked(
  obj: ChainObject,
  lookup: ChainLookup,
  health: HealthLookup = () => undefined,
): WhyBlocked | undefined {
  const self = refOf(obj, 'Kustomization');
  const blocker = explain({ ...obj, kind: self.kind }, lookup, health, [idOf(self)]);
  if (!blocker) return undefined;
  const said = `${idOf(self)} ${phrase(blocker, true)}`;
  return { self, blocker, sentence: /[.?]$/.test(said) ? said : `${said}.`, blocking: rootOf(blocker) };
}

/** The chain one hop per line, for a terminal: each object, then what stops it. */
export function chainLines(why: WhyBlocked): string[] {
  const lines: string[] = [];
  let subject = idOf(why.self);
  let b: Blocker = why.blocker;
  for (;;) {
    if (b.state === 'dependency') {
      lines.push(`${subject} depends on ${idOf(b.dependency)}`);
      subject = idOf(b.dependency);
      b = b.blocker;
      continue;
    }
    if (b.state === 'source') {
      lines.push(`${subject} reads its source ${idOf(b.source)}`);
      lines.push(
        `${idOf(b.source)} ${b.blocker.state === 'failed' || b.blocker.state === 'reconciling' ? `failed: ${b.blocker.reason}${b.blocker.message ? `: ${b.blocker.message}` : ''}` : phrase(b.blocker, false)}`,
      );
      return lines;
    }
    lines.push(`${subject} ${phrase(b, subject === idOf(why.self))}`);
    return lines;
  }
}
