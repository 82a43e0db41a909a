import {
  FORCE_REQUESTED_AT_ANNOTATION,
  type KindDefinition,
  RECONCILE_REQUESTED_AT_ANNOTATION,
  Reason,
} from '@mooring/api';
import { ApiError, type KubeClient, type KubeObject } from '@mooring/runtime';
import { CliError } from './cli-error.ts';
import { apiVersionOf } from './kinds.ts';
import { readyCondition, revisionOf } from './object-status.ts';

/** What a finished reconcile reported. */
export interface ReconcileOutcome {
  ready: boolean;
  message: string;
  revision: string;
}

/** Reads one object, or fails with the command that lists what exists. */
export async function getObject(
  client: KubeClient,
  def: KindDefinition,
  namespace: string,
  name: string,
): Promise<KubeObject> {
  try {
    return await client.get({ apiVersion: apiVersionOf(def), kind: def.kind, namespace, name });
  } catch (err) {
    if (err instanceof ApiError && err.isNotFound)
      throw new CliError(
        `${def.kind} ${namespace}/${name} not found: list them with 'mooring get ${def.plural} -n ${namespace}'.`,
      );
    throw err;
  }
}

/** How a wait treats an object that is waiting for others. */
export interface WaitOptions {
  /**
   * Keep waiting while Ready is False with reason DependencyNotReady: the object reconciles again
   * when its dependencies become ready (`resume --all` resumes them at the same time).
   */
  throughDependencies?: boolean;
}

function handled(obj: KubeObject, requestedAt: string, opts: WaitOptions): ReconcileOutcome | undefined {
  const status = (obj.status ?? {}) as { lastHandledReconcileAt?: string; observedGeneration?: number };
  if (status.lastHandledReconcileAt !== requestedAt) return undefined;
  const ready = readyCondition(obj);
  // A failed reconcile may leave status.observedGeneration behind; the Ready condition records its own.
  const observed = ready?.observedGeneration ?? status.observedGeneration ?? 0;
  if (observed < (obj.metadata.generation ?? 0)) return undefined;
  if (!ready || ready.status === 'Unknown') return undefined;
  if (opts.throughDependencies && ready.status === 'False' && ready.reason === Reason.DependencyNotReady)
    return undefined;
  return { ready: ready.status === 'True', message: ready.message ?? '', revision: revisionOf(obj) };
}

/** RFC 3339 with sub-second digits, as Flux writes `requestedAt` (Go's RFC3339Nano drops trailing zeros). */
export function requestTimestamp(now = new Date()): string {
  return now.toISOString().replace(/\.?0+Z$/, 'Z');
}

/** The merge patch that asks for a reconcile now; `force` asks a HelmRelease for a one-off install or upgrade too. */
export function requestPatch(
  requestedAt: string,
  force = false,
): { metadata: { annotations: Record<string, string> } } {
  return {
    metadata: {
      annotations: {
        [RECONCILE_REQUESTED_AT_ANNOTATION]: requestedAt,
        // The same value in both, as Flux writes them: the operator forces only then.
        ...(force ? { [FORCE_REQUESTED_AT_ANNOTATION]: requestedAt } : {}),
      },
    },
  };
}

/** A reconcile asked for: the `requestedAt` written and the object as that write returned it. */
export interface ReconcileRequest {
  requestedAt: string;
  object: KubeObject;
}

/** A wait that ran out of time, with the sentence that says what the object was still doing. */
export interface TimedOut {
  timedOut: true;
  message: string;
}

function timeoutMessage(
  def: KindDefinition,
  namespace: string,
  name: string,
  last: KubeObject | undefined,
  timeoutMs: number,
): string {
  const seconds = Math.round(timeoutMs / 1000);
  const ready = last && readyCondition(last);
  if (ready?.status === 'False' && ready.reason === Reason.DependencyNotReady)
    return `${def.kind} ${namespace}/${name} was still waiting for its dependencies after ${seconds}s: ${ready.message ?? ''}`;
  return `${def.kind} ${namespace}/${name} did not finish reconciling within ${seconds}s: is the ${def.group.split('.')[0]} operator running? Check with 'mooring check'.`;
}

/**
 * Waits (one watch for all of them) until each requested object echoes its `requestedAt` in
 * `status.lastHandledReconcileAt` with a settled Ready condition; `onSettled` hears of each as it
 * settles or, at the deadline, runs out of time.
 */
export async function waitForReconciles(
  client: KubeClient,
  def: KindDefinition,
  namespace: string,
  requests: ReadonlyMap<string, ReconcileRequest>,
  timeoutMs: number,
  onSettled: (name: string, outcome: ReconcileOutcome | TimedOut) => void,
  opts: WaitOptions = {},
): Promise<void> {
  const pending = new Map(requests);
  const last = new Map<string, KubeObject>();
  const apiVersion = apiVersionOf(def);
  const only = pending.size === 1 ? [...pending.keys()][0] : undefined;
  const fieldSelector = only ? `metadata.name=${only}` : undefined;
  const see = (obj: KubeObject): void => {
    const name = obj.metadata.name ?? '';
    const request = pending.get(name);
    if (!request) return;
    last.set(name, obj);
    const outcome = handled(obj, request.requestedAt, opts);
    if (!outcome) return;
    pending.delete(name);
    onSettled(name, outcome);
  };
  const deleted = (name: string): CliError =>
    new CliError(`${def.kind} ${namespace}/${name} was deleted while waiting for it to reconcile.`);
  // Reads every pending object again (after a dropped or expired watch) and returns where to resume.
  const refresh = async (): Promise<string | undefined> => {
    const list = await client.list(apiVersion, def.kind, { namespace, fieldSelector });
    const present = new Set(list.items.map((o) => o.metadata.name));
    for (const name of pending.keys()) if (!present.has(name)) throw deleted(name);
    for (const obj of list.items) see(obj);
    return list.metadata.resourceVersion;
  };
  for (const request of requests.values()) see(request.object);
  // One object: watch from the version its patch returned; several: from a list of them all.
  let resourceVersion =
    requests.size === 1 ? [...requests.values()][0]!.object.metadata.resourceVersion : await refresh();
  const signal = AbortSignal.timeout(timeoutMs);
  while (pending.size > 0 && !signal.aborted) {
    try {
      let expired = false;
      for await (const ev of client.watch(apiVersion, def.kind, {
        namespace,
        fieldSelector,
        resourceVersion,
        signal,
        timeoutSeconds: 60,
      })) {
        if (ev.type === 'ERROR') {
          expired = true; // e.g. 410 Gone: the resource version is too old to watch from
          break;
        }
        if (ev.type !== 'ADDED' && ev.type !== 'MODIFIED' && ev.type !== 'DELETED') continue;
        resourceVersion = ev.object.metadata.resourceVersion;
        if (ev.type === 'DELETED') {
          if (pending.has(ev.object.metadata.name ?? '')) throw deleted(ev.object.metadata.name ?? '');
          continue;
        }
        see(ev.object);
        if (pending.size === 0) return;
      }
      if (expired) resourceVersion = await refresh();
    } catch (err) {
      if (err instanceof CliError) throw err;
      if (signal.aborted) break;
      // A dropped watch: read the objects again and resume from them.
      resourceVersion = await refresh();
    }
  }
  for (const name of pending.keys())
    onSettled(name, {
      timedOut: true,
      message: timeoutMessage(def, namespace, name, last.get(name), timeoutMs),
    });
}

/**
 * Sets `reconcile.mooring.dev/requestedAt` (and `forceAt` with `force`), then waits (watch-driven) until the operator echoes it
 * in `status.lastHandledReconcileAt` with a settled Ready condition.
 */
export async function reconcileAndWait(
  client: KubeClient,
  def: KindDefinition,
  namespace: string,
  name: string,
  timeoutMs: number,
  opts: WaitOptions & { force?: boolean } = {},
): Promise<ReconcileOutcome> {
  const current = await getObject(client, def, namespace, name);
  if ((current.spec as { suspend?: boolean } | undefined)?.suspend)
    throw new CliError(
      `${def.kind} ${namespace}/${name} is suspended: resume it with 'mooring resume ${def.singular} ${name} -n ${namespace}'.`,
    );
  const requestedAt = requestTimestamp();
  const key = { apiVersion: apiVersionOf(def), kind: def.kind, namespace, name };
  const object = await client.mergePatch(key, requestPatch(requestedAt, opts.force));
  let result: ReconcileOutcome | TimedOut | undefined;
  await waitForReconciles(
    client,
    def,
    namespace,
    new Map([[name, { requestedAt, object }]]),
    timeoutMs,
    (_, outcome) => {
      result = outcome;
    },
    opts,
  );
  if (!result || 'timedOut' in result)
    throw new CliError(result?.message ?? `${def.kind} ${namespace}/${name} did not settle.`);
  return result;
}
