import { type KindDefinition, RECONCILE_REQUESTED_AT_ANNOTATION } from '@mooring/api';
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

function handled(obj: KubeObject, requestedAt: string): ReconcileOutcome | undefined {
  const status = (obj.status ?? {}) as { lastHandledReconcileAt?: string; observedGeneration?: number };
  if (status.lastHandledReconcileAt !== requestedAt) return undefined;
  const ready = readyCondition(obj);
  // A failed reconcile may leave status.observedGeneration behind; the Ready condition records its own.
  const observed = ready?.observedGeneration ?? status.observedGeneration ?? 0;
  if (observed < (obj.metadata.generation ?? 0)) return undefined;
  if (!ready || ready.status === 'Unknown') return undefined;
  return { ready: ready.status === 'True', message: ready.message ?? '', revision: revisionOf(obj) };
}

/** RFC 3339 with sub-second digits, as Flux writes `requestedAt` (Go's RFC3339Nano drops trailing zeros). */
export function requestTimestamp(now = new Date()): string {
  return now.toISOString().replace(/\.?0+Z$/, 'Z');
}

/**
 * Sets `reconcile.mooring.dev/requestedAt`, then waits (watch-driven) until the operator echoes it
 * in `status.lastHandledReconcileAt` with a settled Ready condition.
 */
export async function reconcileAndWait(
  client: KubeClient,
  def: KindDefinition,
  namespace: string,
  name: string,
  timeoutMs: number,
): Promise<ReconcileOutcome> {
  const current = await getObject(client, def, namespace, name);
  if ((current.spec as { suspend?: boolean } | undefined)?.suspend)
    throw new CliError(
      `${def.kind} ${namespace}/${name} is suspended: resume it with 'mooring resume ${def.singular} ${name} -n ${namespace}'.`,
    );
  const requestedAt = requestTimestamp();
  const key = { apiVersion: apiVersionOf(def), kind: def.kind, namespace, name };
  const patched = await client.mergePatch(key, {
    metadata: { annotations: { [RECONCILE_REQUESTED_AT_ANNOTATION]: requestedAt } },
  });
  const signal = AbortSignal.timeout(timeoutMs);
  let resourceVersion = patched.metadata.resourceVersion;
  let last: KubeObject = patched;
  while (!signal.aborted) {
    const done = handled(last, requestedAt);
    if (done) return done;
    try {
      for await (const ev of client.watch(key.apiVersion, def.kind, {
        namespace,
        fieldSelector: `metadata.name=${name}`,
        resourceVersion,
        signal,
        timeoutSeconds: 60,
      })) {
        if (ev.type === 'DELETED')
          throw new CliError(
            `${def.kind} ${namespace}/${name} was deleted while waiting for it to reconcile.`,
          );
        if (ev.type !== 'ADDED' && ev.type !== 'MODIFIED') continue;
        last = ev.object;
        resourceVersion = last.metadata.resourceVersion;
        const outcome = handled(last, requestedAt);
        if (outcome) return outcome;
      }
    } catch (err) {
      if (err instanceof CliError || signal.aborted) {
        if (err instanceof CliError) throw err;
        break;
      }
      // A dropped or expired watch: read the object again and resume from it.
      last = await getObject(client, def, namespace, name);
      resourceVersion = last.metadata.resourceVersion;
    }
  }
  throw new CliError(
    `${def.kind} ${namespace}/${name} did not finish reconciling within ${Math.round(timeoutMs / 1000)}s: is the ${def.group.split('.')[0]} operator running? Check with 'mooring check'.`,
  );
}
