import type { KubeClient, KubeObject, ObjectKey } from '@mooring/runtime';
import { RemoteClusters } from '../remote-cluster.ts';

const PROBE_TIMEOUT_MS = 5_000;
const FIRST_BACKOFF_MS = 5_000;
const MAX_BACKOFF_MS = 300_000;

interface Breaker {
  failures: number;
  openUntil: number;
  message: string;
}

/**
 * A circuit breaker per cluster Secret: one GET /version with a short deadline says whether a
 * cluster answers; after a failure the cluster is reported unreachable without asking again until
 * its own backoff ends (5 s doubling to 5 min), so a dead cluster costs the fleet one timeout per
 * backoff, never one per reconcile, and never holds the others back. Clients are the same lazily
 * built, kubeconfig-fingerprinted ones a Kustomization's spec.kubeConfig uses.
 */
export class ClusterProbe {
  readonly #clients = new RemoteClusters();
  readonly #breakers = new Map<string, Breaker>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** Undefined when the cluster answered, else why it is skipped. */
  async unreachable(local: KubeClient, namespace: string, secretName: string): Promise<string | undefined> {
    const key = `${namespace}/${secretName}`;
    const breaker = this.#breakers.get(key);
    if (breaker && this.#now() < breaker.openUntil) return breaker.message;
    try {
      const client = await this.#clients.clientFor(local, {
        metadata: { name: `cluster:${secretName}`, namespace },
        spec: { kubeConfig: { secretRef: { name: secretName } } },
      });
      await client?.request({ method: 'GET', path: '/version', timeoutMs: PROBE_TIMEOUT_MS });
      this.#breakers.delete(key);
      return undefined;
    } catch (err) {
      const failures = (breaker?.failures ?? 0) + 1;
      const backoff = Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** (failures - 1));
      const message = `cluster ${secretName} unreachable (${(err as Error).message}); skipped, next probe in ${Math.round(backoff / 1000)}s`;
      this.#breakers.set(key, { failures, openUntil: this.#now() + backoff, message });
      return message;
    }
  }

  /**
   * One GET of `key` on the cluster (no watch, no cache: a fleet of agents must not multiply the
   * operator's memory), for a set that reads its agents' members; undefined when it does not exist.
   * A failure opens the cluster's breaker as a failed probe does.
   */
  async read<T extends KubeObject>(
    local: KubeClient,
    namespace: string,
    secretName: string,
    key: ObjectKey,
  ): Promise<{ obj: T | undefined } | { unreachable: string }> {
    const down = await this.unreachable(local, namespace, secretName);
    if (down) return { unreachable: down };
    try {
      const client = await this.#clients.clientFor(local, {
        metadata: { name: `cluster:${secretName}`, namespace },
        spec: { kubeConfig: { secretRef: { name: secretName } } },
      });
      return { obj: await client?.getOrUndefined<T>(key) };
    } catch (err) {
      this.#breakers.set(`${namespace}/${secretName}`, {
        failures: 1,
        openUntil: this.#now() + FIRST_BACKOFF_MS,
        message: `cluster ${secretName} unreachable (${(err as Error).message})`,
      });
      return { unreachable: `cluster ${secretName}: ${(err as Error).message}` };
    }
  }

  /** Drops the client and breaker of a cluster that left the fleet. */
  forget(namespace: string, secretName: string): void {
    this.#clients.forget(`${namespace}/cluster:${secretName}`);
    this.#breakers.delete(`${namespace}/${secretName}`);
  }
}
