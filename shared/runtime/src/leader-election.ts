import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { ApiError } from './api-error.ts';
import { type Clock, jitter, systemClock } from './clock.ts';
import type { KubeClient } from './kube-client.ts';
import type { KubeObject } from './kube-object.ts';
import type { LoggerLike } from './logger.ts';

/** `coordination.k8s.io/v1` LeaseSpec; times are MicroTime strings. */
export interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
  [key: string]: unknown;
}

export interface Lease extends KubeObject {
  spec?: LeaseSpec;
}

export interface LeaderElectorOptions {
  client: Pick<KubeClient, 'request' | 'create'>;
  namespace: string;
  /** Name of the Lease, e.g. `source-operator-leader-election`. */
  name: string;
  /** Unique per process, e.g. `leaderIdentity()`: pod name plus a UUID. */
  identity: string;
  /** How long others wait, from the last renewal they saw, before taking over. Default 35 s. */
  leaseDurationMs?: number;
  /** How long the leader keeps trying to renew before it gives up leading. Default 30 s. */
  renewDeadlineMs?: number;
  /** Time between tries to acquire or renew. Default 5 s. */
  retryPeriodMs?: number;
  /**
   * Hand the lease back when `run`'s signal aborts, so another replica takes over at once
   * (client-go's ReleaseOnCancel). Default true; false leaves it to expire, as a crash would.
   */
  releaseOnCancel?: boolean;
  clock?: Clock;
  random?: () => number;
  logger?: LoggerLike;
}

export interface LeaderCallbacks {
  /**
   * Called once the lease is held; `leaderSignal` aborts when leading ends. A returned promise should
   * settle when the work it started has stopped: on shutdown the lease is renewed until then and
   * only released after, so no other replica starts while this one still finishes work in flight.
   */
  onStartedLeading(leaderSignal: AbortSignal): void | Promise<void>;
  /** Called after leading ended, whether by shutdown or by a lost lease; not called if never leading. */
  onStoppedLeading(): void;
  /** Called when a different holder is observed, this process included. */
  onNewLeader?(identity: string): void;
}

/** How `run` ended: `stopped` by its signal (never led, or released), or `lost` when renewal failed. */
export type LeaderElectionOutcome = 'stopped' | 'lost';

const LEASE_API = 'coordination.k8s.io/v1';

/** A Kubernetes MicroTime (`2006-01-02T15:04:05.000000Z`) for epoch milliseconds. */
export function formatMicroTime(ms: number): string {
  return new Date(Math.floor(ms)).toISOString().replace(/Z$/, '000Z');
}

/** A holder identity unique to this process: the host (pod) name and a UUID, as controller-runtime does. */
export function leaderIdentity(host: string = hostname()): string {
  return `${host}_${randomUUID()}`;
}

/**
 * Lease-based leader election with client-go's semantics: acquire when the Lease is free, ours, or
 * unrenewed for its duration by *local* observation (so clock skew between nodes does not matter);
 * renew every retry period; stop leading when renewal fails for the renew deadline. Writes are
 * optimistic: a PUT carries the resourceVersion read, and a 409 means another replica won.
 */
export class LeaderElector {
  readonly #client: LeaderElectorOptions['client'];
  readonly #namespace: string;
  readonly #name: string;
  readonly #identity: string;
  readonly #leaseDurationMs: number;
  readonly #renewDeadlineMs: number;
  readonly #retryPeriodMs: number;
  readonly #releaseOnCancel: boolean;
  readonly #clock: Clock;
  readonly #random: () => number;
  readonly #logger: LoggerLike | undefined;
  readonly #path: string;

  /** The Lease as last read or written. */
  #lease: Lease | undefined;
  /** The spec last observed, serialized, and when (local clock) it was first seen that way. */
  #observedSpec: string | undefined;
  #observedTime = 0;
  #reportedLeader: string | undefined;
  #leading = false;
  #running = false;
  #onNewLeader: ((identity: string) => void) | undefined;

  constructor(options: LeaderElectorOptions) {
    this.#client = options.client;
    this.#namespace = options.namespace;
    this.#name = options.name;
    this.#identity = options.identity;
    this.#leaseDurationMs = options.leaseDurationMs ?? 35_000;
    this.#renewDeadlineMs = options.renewDeadlineMs ?? 30_000;
    this.#retryPeriodMs = options.retryPeriodMs ?? 5_000;
    this.#releaseOnCancel = options.releaseOnCancel ?? true;
    this.#clock = options.clock ?? systemClock;
    this.#random = options.random ?? Math.random;
    this.#logger = options.logger;
    if (!this.#identity) throw new Error('leader election needs a non-empty identity');
    if (!this.#namespace || !this.#name)
      throw new Error('leader election needs the Lease namespace and name');
    if (this.#leaseDurationMs < 1_000) throw new Error('leader election lease duration must be at least 1s');
    if (this.#leaseDurationMs <= this.#renewDeadlineMs) {
      throw new Error('leader election lease duration must be longer than the renew deadline');
    }
    if (this.#retryPeriodMs <= 0 || this.#renewDeadlineMs <= this.#retryPeriodMs * 1.2) {
      throw new Error('leader election renew deadline must be longer than 1.2 retry periods');
    }
    this.#path = `/apis/${LEASE_API}/namespaces/${encodeURIComponent(this.#namespace)}/leases/${encodeURIComponent(this.#name)}`;
  }

  /** True while this process holds the lease and leads. */
  get isLeader(): boolean {
    return this.#leading;
  }

  /** The holder last observed, empty when the lease is free, undefined before the first read. */
  get leader(): string | undefined {
    return this.#lease?.spec?.holderIdentity;
  }

  /**
   * Campaigns until leading, then leads until `signal` aborts (the lease is released, unless
   * `releaseOnCancel` is false) or renewal fails for the renew deadline (`lost`: the caller should
   * exit, as its view of the world may be stale). Resolves after `onStoppedLeading`.
   */
  async run(signal: AbortSignal, callbacks: LeaderCallbacks): Promise<LeaderElectionOutcome> {
    if (this.#running)
      throw new Error(`leader elector for Lease ${this.#namespace}/${this.#name} is already running`);
    this.#running = true;
    this.#onNewLeader = callbacks.onNewLeader;
    try {
      if (!(await this.#acquire(signal))) return 'stopped';
      this.#leading = true;
      if (signal.aborted) {
        await this.#stop(false);
        return 'stopped';
      }
      const leader = new AbortController();
      const stopRenewing = new AbortController();
      let work: Promise<unknown>;
      try {
        work = Promise.resolve(callbacks.onStartedLeading(leader.signal));
      } catch (err) {
        work = Promise.reject(err);
      }
      work = work.catch((err: Error) => this.#logger?.error({ err }, 'leader work failed'));
      const onAbort = () => {
        leader.abort();
        void work.finally(() => stopRenewing.abort());
      };
      signal.addEventListener('abort', onAbort, { once: true });
      let lost: boolean;
      try {
        lost = await this.#renewUntil(stopRenewing.signal);
      } finally {
        signal.removeEventListener('abort', onAbort);
      }
      leader.abort();
      await this.#stop(lost);
      callbacks.onStoppedLeading();
      return lost ? 'lost' : 'stopped';
    } finally {
      this.#running = false;
    }
  }

  async #acquire(signal: AbortSignal): Promise<boolean> {
    this.#logger?.info(
      { lease: `${this.#namespace}/${this.#name}`, identity: this.#identity },
      'attempting to acquire leader lease',
    );
    while (!signal.aborted) {
      if (await this.#tryAcquireOrRenew(this.#renewDeadlineMs)) {
        this.#logger?.info(
          { lease: `${this.#namespace}/${this.#name}`, identity: this.#identity },
          'acquired leader lease',
        );
        return true;
      }
      await this.#clock.sleep(jitter(this.#retryPeriodMs, 0.1, this.#random), signal);
    }
    return false;
  }

  /** Renews every retry period until `stop` aborts (false) or renewal fails for the deadline (true). */
  async #renewUntil(stop: AbortSignal): Promise<boolean> {
    let lastRenewed = this.#clock.now();
    for (;;) {
      await this.#clock.sleep(this.#retryPeriodMs, stop);
      if (stop.aborted) return false;
      const attempt = this.#clock.now();
      const remaining = lastRenewed + this.#renewDeadlineMs - attempt;
      if (remaining > 0 && (await this.#tryAcquireOrRenew(remaining))) {
        lastRenewed = attempt;
        continue;
      }
      if (this.#clock.now() - lastRenewed >= this.#renewDeadlineMs) {
        this.#logger?.error(
          {
            lease: `${this.#namespace}/${this.#name}`,
            identity: this.#identity,
            renewDeadlineMs: this.#renewDeadlineMs,
          },
          'failed to renew leader lease within the renew deadline; leadership lost',
        );
        return true;
      }
    }
  }

  async #stop(lost: boolean): Promise<void> {
    try {
      if (!lost && this.#releaseOnCancel) await this.#release();
    } finally {
      this.#leading = false;
    }
  }

  /** One try; true when the lease is now ours, with renewTime now. Never throws. */
  async #tryAcquireOrRenew(timeoutMs: number): Promise<boolean> {
    const now = this.#clock.now();
    const nowMicro = formatMicroTime(now);
    const leaseSeconds = Math.ceil(this.#leaseDurationMs / 1000);

    // The leader renews from what it last wrote; a stale resourceVersion (409) falls back to a fresh read.
    if (this.#leading && this.#lease?.spec?.holderIdentity === this.#identity) {
      const spec: LeaseSpec = {
        ...this.#lease.spec,
        leaseDurationSeconds: leaseSeconds,
        renewTime: nowMicro,
      };
      if (await this.#update({ ...this.#lease, spec }, now, timeoutMs, true)) return true;
    }

    let current: Lease | undefined;
    try {
      current = await this.#client.request<Lease>({ method: 'GET', path: this.#path, timeoutMs });
    } catch (err) {
      if (!(err instanceof ApiError && err.isNotFound)) {
        this.#logger?.warn({ err: (err as Error).message, lease: this.#name }, 'cannot read leader lease');
        return false;
      }
    }

    if (!current) {
      try {
        const created = await this.#client.create<Lease>({
          apiVersion: LEASE_API,
          kind: 'Lease',
          metadata: { namespace: this.#namespace, name: this.#name },
          spec: {
            holderIdentity: this.#identity,
            leaseDurationSeconds: leaseSeconds,
            acquireTime: nowMicro,
            renewTime: nowMicro,
            leaseTransitions: 0,
          },
        });
        this.#observe(created, now);
        return true;
      } catch (err) {
        if (!(err instanceof ApiError && err.isConflict)) {
          this.#logger?.warn(
            { err: (err as Error).message, lease: this.#name },
            'cannot create leader lease',
          );
        }
        return false;
      }
    }

    this.#observe(current, now);
    const spec = current.spec ?? {};
    const holder = spec.holderIdentity ?? '';
    const mine = holder === this.#identity;
    const heldUntil = this.#observedTime + (spec.leaseDurationSeconds ?? 0) * 1000;
    if (holder !== '' && !mine && heldUntil > now) return false;

    const next: LeaseSpec = {
      ...spec,
      holderIdentity: this.#identity,
      leaseDurationSeconds: leaseSeconds,
      renewTime: nowMicro,
      acquireTime: mine ? (spec.acquireTime ?? nowMicro) : nowMicro,
      leaseTransitions: mine ? (spec.leaseTransitions ?? 0) : (spec.leaseTransitions ?? 0) + 1,
    };
    return this.#update({ ...current, spec: next }, now, timeoutMs, false);
  }

  /** PUT with the resourceVersion the lease carries; false on any failure (409: someone else wrote first). */
  async #update(lease: Lease, now: number, timeoutMs: number, quiet: boolean): Promise<boolean> {
    try {
      const updated = await this.#client.request<Lease>({
        method: 'PUT',
        path: this.#path,
        body: lease,
        timeoutMs,
      });
      this.#observe(updated, now);
      return true;
    } catch (err) {
      if (!quiet && !(err instanceof ApiError && err.isConflict)) {
        this.#logger?.warn({ err: (err as Error).message, lease: this.#name }, 'cannot update leader lease');
      }
      return false;
    }
  }

  /** Notes the lease; a changed spec restarts the local expiry timer, as client-go's observedTime. */
  #observe(lease: Lease, now: number): void {
    this.#lease = lease;
    const spec = JSON.stringify(lease.spec ?? {});
    if (spec !== this.#observedSpec) {
      this.#observedSpec = spec;
      this.#observedTime = now;
    }
    const holder = lease.spec?.holderIdentity;
    if (holder && holder !== this.#reportedLeader) {
      this.#reportedLeader = holder;
      this.#onNewLeader?.(holder);
    }
  }

  /** Hands the lease back: no holder, a 1 s duration, so the next candidate takes it at once. */
  async #release(): Promise<void> {
    const lease = this.#lease;
    if (!lease || lease.spec?.holderIdentity !== this.#identity) return;
    const now = this.#clock.now();
    const nowMicro = formatMicroTime(now);
    const spec: LeaseSpec = {
      ...lease.spec,
      holderIdentity: '',
      leaseDurationSeconds: 1,
      acquireTime: nowMicro,
      renewTime: nowMicro,
      leaseTransitions: lease.spec.leaseTransitions ?? 0,
    };
    try {
      const released = await this.#client.request<Lease>({
        method: 'PUT',
        path: this.#path,
        body: { ...lease, spec },
        timeoutMs: this.#renewDeadlineMs,
      });
      this.#observe(released, now);
      this.#logger?.info(
        { lease: `${this.#namespace}/${this.#name}`, identity: this.#identity },
        'released leader lease',
      );
    } catch (err) {
      this.#logger?.warn(
        { err: (err as Error).message, lease: this.#name },
        'cannot release leader lease; it will expire',
      );
    }
  }
}
