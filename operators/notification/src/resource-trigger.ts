import {
  RECONCILE_REQUESTED_AT_ANNOTATION,
  type Receiver,
  WEBHOOK_ACCEPTED_AT_ANNOTATION,
} from '@mooring/api';
import type { KubeClient, KubeObject } from '@mooring/runtime';
import { KIND_API_VERSIONS } from './kind-versions.ts';

/** A resource the Receiver asked to reconcile. */
export interface Triggered {
  kind: string;
  namespace: string;
  name: string;
}

/** A trigger that could not be done; the message names the resource, never the request. */
export class TriggerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TriggerError';
  }
}

/**
 * Sets `reconcile.mooring.dev/requestedAt` and `notification.mooring.dev/webhookAcceptedAt` on every resource the Receiver selects: named ones,
 * and with `*` every one matching the labels. With `noCrossNamespaceRefs` other namespaces are refused.
 */
export async function triggerResources(
  client: Pick<KubeClient, 'list' | 'mergePatch'>,
  receiver: Receiver,
  options: { noCrossNamespaceRefs: boolean; now?: () => Date },
): Promise<Triggered[]> {
  const ns = receiver.metadata.namespace ?? '';
  const value = (options.now?.() ?? new Date()).toISOString();
  // The second annotation marks the request as a push, for the push-to-applied metric.
  const patch = {
    metadata: {
      annotations: { [RECONCILE_REQUESTED_AT_ANNOTATION]: value, [WEBHOOK_ACCEPTED_AT_ANNOTATION]: value },
    },
  };
  const done: Triggered[] = [];
  for (const r of receiver.spec.resources) {
    const namespace = r.namespace ?? ns;
    if (options.noCrossNamespaceRefs && namespace !== ns)
      throw new TriggerError(
        `${r.kind} ${namespace}/${r.name} is in another namespace and cross-namespace references are disabled`,
      );
    const apiVersion = r.apiVersion ?? KIND_API_VERSIONS[r.kind];
    if (!apiVersion) throw new TriggerError(`kind ${r.kind} cannot be triggered`);
    let names: string[];
    if (r.name === '*') {
      const selector = Object.entries(r.matchLabels ?? {})
        .map(([k, v]) => `${k}=${v}`)
        .join(',');
      const list = await client.list<KubeObject>(apiVersion, r.kind, {
        namespace,
        labelSelector: selector || undefined,
      });
      names = list.items.map((o) => o.metadata.name ?? '').filter(Boolean);
    } else {
      names = [r.name];
    }
    for (const name of names) {
      try {
        await client.mergePatch({ apiVersion, kind: r.kind, namespace, name }, patch);
      } catch (err) {
        const code = (err as { statusCode?: number }).statusCode;
        throw new TriggerError(
          `annotating ${r.kind} ${namespace}/${name} failed${code ? ` (HTTP ${code})` : ''}`,
        );
      }
      done.push({ kind: r.kind, namespace, name });
    }
  }
  return done;
}
