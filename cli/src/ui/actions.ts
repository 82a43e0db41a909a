import { KINDS } from '@mooring/api';
import { ApiError, type Impersonation, type KubeClient } from '@mooring/runtime';
import { apiVersionOf } from '../kinds.ts';
import { requestPatch, requestTimestamp } from '../wait-reconcile.ts';

/** What the page may ask for; each is a CLI command of the same name, done as the user. */
export const ACTIONS = ['reconcile', 'reconcile-with-source', 'suspend', 'resume'] as const;
export type Action = (typeof ACTIONS)[number];

/** The outcome the page shows: what was done, or the API server's refusal as it gave it. */
export interface ActionResult {
  ok: boolean;
  message: string;
  /** The API server's status code when it refused. */
  statusCode?: number;
}

/**
 * Performs `action` on `kind namespace/name` as `reconcile`, `suspend` and `resume` do (the same
 * patches), without waiting: the page sees the result arrive through its watch. `as` is the signed-in
 * user of the in-cluster UI, impersonated so that RBAC decides; the local UI acts as the kubeconfig's.
 */
export async function performAction(
  client: KubeClient,
  action: Action,
  kind: string,
  namespace: string,
  name: string,
  as?: Impersonation,
): Promise<ActionResult> {
  const def = KINDS.find((k) => k.kind === kind);
  if (!def) return { ok: false, message: `${kind} is not a Mooring kind.` };
  const key = { apiVersion: apiVersionOf(def), kind, namespace, name };
  const what = `${kind} ${namespace}/${name}`;
  try {
    if (action === 'suspend') {
      await client.mergePatch(key, { spec: { suspend: true } }, undefined, as);
      return { ok: true, message: `${what} suspended` };
    }
    if (action === 'resume') {
      await client.mergePatch(
        key,
        { spec: { suspend: null }, ...requestPatch(requestTimestamp()) },
        undefined,
        as,
      );
      return { ok: true, message: `${what} resumed` };
    }
    const done: string[] = [];
    if (action === 'reconcile-with-source') {
      const obj = await client.get(key, as);
      const ref = (obj.spec as { sourceRef?: { kind: string; name: string; namespace?: string } }).sourceRef;
      const srcDef = KINDS.find((k) => k.kind === ref?.kind);
      if (!ref || !srcDef) return { ok: false, message: `${what} has no source to reconcile.` };
      const srcNs = ref.namespace ?? namespace;
      await client.mergePatch(
        { apiVersion: apiVersionOf(srcDef), kind: srcDef.kind, namespace: srcNs, name: ref.name },
        requestPatch(requestTimestamp()),
        undefined,
        as,
      );
      done.push(`${srcDef.kind} ${srcNs}/${ref.name}`);
    }
    await client.mergePatch(key, requestPatch(requestTimestamp()), undefined, as);
    done.push(what);
    return { ok: true, message: `reconcile requested for ${done.join(' and ')}` };
  } catch (err) {
    if (err instanceof ApiError)
      return { ok: false, statusCode: err.statusCode, message: err.status?.message ?? err.message };
    throw err;
  }
}
