import type { KubeObject } from '@mooring/runtime';
import { testCluster } from './cluster.ts';
import { eventually } from './eventually.ts';

/** A Mooring object as tests read it: conditions in the kstatus shape. */
export interface ObjectWithConditions extends KubeObject {
  status?: {
    observedGeneration?: number;
    conditions?: {
      type: string;
      status: string;
      reason: string;
      message: string;
      observedGeneration?: number;
    }[];
    [key: string]: unknown;
  };
}

/**
 * Waits until the object's Ready condition is `status` at its current generation and `when` holds;
 * on timeout the error carries the last status seen, which is what a failing test needs to show.
 */
export async function waitForReady<T extends ObjectWithConditions>(
  key: { apiVersion: string; kind: string; namespace: string; name: string },
  status: 'True' | 'False' = 'True',
  when: (obj: T) => boolean = () => true,
  timeoutMs = 20_000,
): Promise<T> {
  const { client } = await testCluster();
  let last: T | undefined;
  try {
    return await eventually(
      `${key.kind} ${key.name} Ready=${status}`,
      async () => {
        last = await client.get<T>(key);
        const ready = last.status?.conditions?.find((c) => c.type === 'Ready');
        return ready?.status === status && ready.observedGeneration === last.metadata.generation && when(last)
          ? last
          : undefined;
      },
      timeoutMs,
    );
  } catch (err) {
    throw new Error(`${(err as Error).message}; last status: ${JSON.stringify(last?.status)}`);
  }
}

/** Sets `reconcile.mooring.dev/requestedAt` to a fresh token and waits until the operator reports it handled. */
export async function requestReconcileAndWait<T extends ObjectWithConditions>(
  key: { apiVersion: string; kind: string; namespace: string; name: string },
  timeoutMs = 20_000,
): Promise<T> {
  const { client } = await testCluster();
  const token = new Date().toISOString() + Math.random();
  await client.mergePatch(key, { metadata: { annotations: { 'reconcile.mooring.dev/requestedAt': token } } });
  return eventually(
    `${key.kind} ${key.name} handled ${token}`,
    async () => {
      const obj = await client.get<T>(key);
      return obj.status?.lastHandledReconcileAt === token ? obj : undefined;
    },
    timeoutMs,
  );
}
