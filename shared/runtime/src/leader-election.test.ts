import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { eventually, testCluster, testNamespace } from '@mooring/test/harness';
import { ApiError } from './api-error.ts';
import { systemClock } from './clock.ts';
import { FakeClock } from './fake-clock.ts';
import type { KubeClient } from './kube-client.ts';
import {
  formatMicroTime,
  type LeaderElectionOutcome,
  LeaderElector,
  type LeaderElectorOptions,
  type Lease,
  leaderIdentity,
} from './leader-election.ts';

// Short periods so takeovers happen in seconds.
const LEASE_MS = 2_000;
const RENEW_MS = 1_500;
const RETRY_MS = 200;
const LEASE_NAME = 'test-operator-leader-election';
const MICRO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;
/**
 * How long a test waits for something that must happen: patience for a loaded machine, not a
 * measure of speed. How soon each step happens is pinned by the virtual-time tests at the end.
 */
const PATIENCE_MS = 15 * LEASE_MS;

interface Candidate {
  identity: string;
  elector: LeaderElector;
  stop: AbortController;
  /** Resolves with the time leading started. */
  started: Promise<number>;
  /** Resolves with the time leading stopped. */
  stoppedLeading: Promise<number>;
  run: Promise<LeaderElectionOutcome>;
  /** Aborted when leading ends. */
  leaderSignal: () => AbortSignal | undefined;
  startedCount: () => number;
}

function candidate(
  t: TestContext,
  client: LeaderElectorOptions['client'],
  namespace: string,
  identity: string,
  options: Partial<LeaderElectorOptions> & { workAfterAbort?: Promise<void> } = {},
): Candidate {
  const stop = new AbortController();
  let startedCount = 0;
  let leaderSignal: AbortSignal | undefined;
  let onStarted!: (at: number) => void;
  let onStopped!: (at: number) => void;
  const started = new Promise<number>((resolve) => (onStarted = resolve));
  const stoppedLeading = new Promise<number>((resolve) => (onStopped = resolve));
  const elector = new LeaderElector({
    client,
    namespace,
    name: LEASE_NAME,
    identity,
    leaseDurationMs: LEASE_MS,
    renewDeadlineMs: RENEW_MS,
    retryPeriodMs: RETRY_MS,
    ...options,
  });
  const run = elector.run(stop.signal, {
    onStartedLeading(signal) {
      startedCount++;
      leaderSignal = signal;
      onStarted(Date.now());
      // Work that winds down only when `workAfterAbort` settles, after the leader signal aborted.
      const { workAfterAbort } = options;
      if (workAfterAbort === undefined) return;
      return new Promise<void>((resolve) =>
        signal.addEventListener('abort', () => void workAfterAbort.then(resolve), { once: true }),
      );
    },
    onStoppedLeading() {
      onStopped(Date.now());
    },
  });
  t.after(async () => {
    stop.abort();
    await run;
  });
  return {
    identity,
    elector,
    stop,
    started,
    stoppedLeading,
    run,
    leaderSignal: () => leaderSignal,
    startedCount: () => startedCount,
  };
}

async function readLease(namespace: string): Promise<Lease> {
  const { client } = await testCluster();
  return client.get<Lease>({
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    namespace,
    name: LEASE_NAME,
  });
}

const sleep = (ms: number) => systemClock.sleep(ms);

/**
 * Every holder the test Lease has had, in the API server's order, from a watch opened before anyone
 * wrote it; renewals by the same holder are folded into one entry. A watch misses no version, so
 * the sequence shows each handover however slowly the machine runs.
 */
async function leaseHolders(t: TestContext, client: KubeClient, namespace: string) {
  const list = await client.list<Lease>('coordination.k8s.io/v1', 'Lease', { namespace });
  const stop = new AbortController();
  const seen: string[] = [];
  const watching = (async () => {
    for await (const e of client.watch<Lease>('coordination.k8s.io/v1', 'Lease', {
      namespace,
      resourceVersion: list.metadata?.resourceVersion,
      signal: stop.signal,
    })) {
      if (e.type !== 'ADDED' && e.type !== 'MODIFIED') continue;
      const holder = e.object.spec?.holderIdentity ?? '';
      if (seen.at(-1) !== holder) seen.push(holder);
    }
  })().catch(() => {});
  t.after(async () => {
    stop.abort();
    await watching;
  });
  /** Resolves to the holders once the latest is `last`. */
  return (last: string) =>
    eventually(
      `the Lease history to reach ${JSON.stringify(last)}`,
      async () => (seen.at(-1) === last ? [...seen] : undefined),
      PATIENCE_MS,
    );
}

/** Rejects if `p` does not settle within `ms`. */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms);
    }),
  ]);
}

describe('LeaderElector on a real API server', () => {
  it('lets exactly one of two candidates lead, and keeps renewing its lease', async (t) => {
    const { client } = await testCluster();
    const namespace = await testNamespace(t, 'leader-one');
    const a = candidate(t, client, namespace, 'a');
    const b = candidate(t, client, namespace, 'b');
    await within(Promise.race([a.started, b.started]), PATIENCE_MS, 'a leader');
    await sleep(1_000);
    const [leader, follower] = a.startedCount() === 1 ? [a, b] : [b, a];
    assert.equal(leader.startedCount(), 1);
    assert.equal(follower.startedCount(), 0);
    assert.equal(leader.elector.isLeader, true);
    assert.equal(follower.elector.isLeader, false);
    assert.equal(follower.elector.leader, leader.identity);

    const first = await readLease(namespace);
    assert.equal(first.spec?.holderIdentity, leader.identity);
    assert.equal(first.spec?.leaseDurationSeconds, 2);
    assert.equal(first.spec?.leaseTransitions, 0);
    assert.match(String(first.spec?.acquireTime), MICRO_TIME);
    assert.match(String(first.spec?.renewTime), MICRO_TIME);
    const second = await eventually(
      'a renewal',
      async () => {
        const lease = await readLease(namespace);
        return String(lease.spec?.renewTime) > String(first.spec?.renewTime) ? lease : undefined;
      },
      PATIENCE_MS,
    );
    assert.equal(second.spec?.holderIdentity, leader.identity);
    assert.equal(second.spec?.acquireTime, first.spec?.acquireTime);
    // Still one leader after several lease durations' worth of renewals.
    assert.equal(follower.startedCount(), 0);
  });

  it('lets the follower take over once a crashed leader’s lease runs out', async (t) => {
    const { client } = await testCluster();
    const namespace = await testNamespace(t, 'leader-crash');
    const holders = await leaseHolders(t, client, namespace);
    // releaseOnCancel false: aborting is a crash, the lease is left to expire.
    const a = candidate(t, client, namespace, 'a', { releaseOnCancel: false });
    await within(a.started, PATIENCE_MS, 'a leading');
    const b = candidate(t, client, namespace, 'b');
    await sleep(LEASE_MS + 500);
    assert.equal(b.startedCount(), 0, 'the follower must not take a lease that is being renewed');

    a.stop.abort();
    assert.equal(await a.run, 'stopped');
    assert.equal(a.leaderSignal()?.aborted, true);

    await within(b.started, PATIENCE_MS, 'b taking over');
    // A crash does not release: b took the lease straight from a once it ran out, with no free
    // lease in between. (That b waits exactly one lease duration is the virtual-time test's.)
    assert.deepEqual(await holders('b'), ['a', 'b']);
    const lease = await readLease(namespace);
    assert.equal(lease.spec?.holderIdentity, 'b');
    assert.equal(lease.spec?.leaseTransitions, 1);
  });

  it('releases on a graceful stop, after the work finished, so the follower takes over within a retry', async (t) => {
    const { client } = await testCluster();
    const namespace = await testNamespace(t, 'leader-release');
    const holders = await leaseHolders(t, client, namespace);
    let finishWork!: () => void;
    const workAfterAbort = new Promise<void>((resolve) => (finishWork = resolve));
    const a = candidate(t, client, namespace, 'a', { workAfterAbort });
    await within(a.started, PATIENCE_MS, 'a leading');
    const b = candidate(t, client, namespace, 'b');
    await sleep(3 * RETRY_MS);
    assert.equal(b.startedCount(), 0);

    a.stop.abort();
    assert.equal(a.leaderSignal()?.aborted, true, 'the leader signal aborts at once');
    // While a's work winds down the lease stays a's and is renewed: ordered by events, not by time.
    const atStop = await readLease(namespace);
    assert.equal(atStop.spec?.holderIdentity, 'a');
    const renewed = await eventually(
      'a renewal while the work winds down',
      async () => {
        const lease = await readLease(namespace);
        return String(lease.spec?.renewTime) > String(atStop.spec?.renewTime) ? lease : undefined;
      },
      PATIENCE_MS,
    );
    assert.equal(renewed.spec?.holderIdentity, 'a', 'released before the work finished');
    let stopped = false;
    void a.run.then(() => (stopped = true));
    await sleep(0);
    assert.equal(stopped, false, 'run resolved before the work finished');
    assert.equal(b.startedCount(), 0, 'no overlap with the old leader’s work');

    finishWork();
    assert.equal(await a.run, 'stopped');
    await within(b.started, PATIENCE_MS, 'b taking over');
    // b took the released (free) lease, not one that ran out: that is what makes it take over
    // within a retry rather than a lease duration (timed exactly in virtual time below).
    assert.deepEqual(await holders('b'), ['a', '', 'b']);
    const lease = await readLease(namespace);
    assert.equal(lease.spec?.holderIdentity, 'b');
    assert.equal(lease.spec?.leaseTransitions, 1);
  });

  it('leaves the released lease free for anyone', async (t) => {
    const { client } = await testCluster();
    const namespace = await testNamespace(t, 'leader-free');
    const a = candidate(t, client, namespace, 'a');
    await within(a.started, PATIENCE_MS, 'a leading');
    a.stop.abort();
    await a.run;
    const lease = await readLease(namespace);
    assert.equal(lease.spec?.holderIdentity ?? '', '');
    assert.equal(lease.spec?.leaseDurationSeconds, 1);
  });

  it('stops leading when renewal fails for the renew deadline', async (t) => {
    const { client } = await testCluster();
    const namespace = await testNamespace(t, 'leader-lost');
    const a = candidate(t, client, namespace, 'a');
    await within(a.started, PATIENCE_MS, 'a leading');

    // Someone else takes the lease by force; every renewal of a's now fails.
    const lease = await readLease(namespace);
    await client.request({
      method: 'PUT',
      path: `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases/${LEASE_NAME}`,
      body: { ...lease, spec: { ...lease.spec, holderIdentity: 'intruder', leaseDurationSeconds: 60 } },
    });
    // That a keeps trying for the whole renew deadline first is timed in virtual time below.
    assert.equal(await within(a.run, PATIENCE_MS, 'a giving up'), 'lost');
    await a.stoppedLeading;
    assert.equal(a.leaderSignal()?.aborted, true);
    assert.equal(a.elector.isLeader, false);
    // A lost lease is not released: it is someone else's.
    assert.equal((await readLease(namespace)).spec?.holderIdentity, 'intruder');
  });

  it('returns without leading when stopped while another holds the lease', async (t) => {
    const { client } = await testCluster();
    const namespace = await testNamespace(t, 'leader-never');
    const a = candidate(t, client, namespace, 'a');
    await within(a.started, PATIENCE_MS, 'a leading');
    let stopped = 0;
    const b = new LeaderElector({
      client,
      namespace,
      name: LEASE_NAME,
      identity: 'b',
      leaseDurationMs: LEASE_MS,
      renewDeadlineMs: RENEW_MS,
      retryPeriodMs: RETRY_MS,
    });
    const stop = new AbortController();
    const run = b.run(stop.signal, {
      onStartedLeading: () => assert.fail('b must not lead'),
      onStoppedLeading: () => void stopped++,
    });
    await sleep(3 * RETRY_MS);
    stop.abort();
    assert.equal(await within(run, PATIENCE_MS, 'b returning'), 'stopped');
    assert.equal(stopped, 0);
    assert.equal((await readLease(namespace)).spec?.holderIdentity, 'a');
  });
});

describe('LeaderElector options', () => {
  const base = {
    client: {} as LeaderElectorOptions['client'],
    namespace: 'ns',
    name: 'lease',
    identity: 'me',
  };
  const bad: [string, Partial<LeaderElectorOptions>, RegExp][] = [
    ['empty identity', { identity: '' }, /non-empty identity/],
    [
      'lease not longer than renew',
      { leaseDurationMs: 30_000, renewDeadlineMs: 30_000 },
      /longer than the renew deadline/,
    ],
    ['renew too close to retry', { renewDeadlineMs: 5_000, retryPeriodMs: 5_000 }, /1\.2 retry periods/],
    ['sub-second lease', { leaseDurationMs: 500, renewDeadlineMs: 400, retryPeriodMs: 100 }, /at least 1s/],
  ];
  for (const [name, opts, want] of bad) {
    it(`rejects ${name}`, () => assert.throws(() => new LeaderElector({ ...base, ...opts }), want));
  }

  it('accepts the Flux defaults', () => {
    assert.doesNotThrow(() => new LeaderElector(base));
  });

  it('formats MicroTime with six fraction digits', () => {
    assert.equal(formatMicroTime(Date.parse('2025-01-02T03:04:05.678Z')), '2025-01-02T03:04:05.678000Z');
    assert.equal(formatMicroTime(0.9), '1970-01-01T00:00:00.000000Z');
  });

  it('makes identities unique per process', () => {
    const a = leaderIdentity('pod-1');
    assert.match(a, /^pod-1_[0-9a-f-]{36}$/);
    assert.notEqual(a, leaderIdentity('pod-1'));
  });
});

/** One Lease in memory with the API server's optimistic concurrency: enough for virtual-time runs. */
class MemoryLease {
  lease: Lease | undefined;
  failWrites = false;
  #rv = 0;

  #store(obj: Lease): Lease {
    this.lease = structuredClone({
      ...obj,
      metadata: { ...obj.metadata, resourceVersion: String(++this.#rv) },
    });
    return structuredClone(this.lease);
  }

  readonly client = {
    request: async (req: { method: string; path: string; body?: unknown }) => {
      if (req.method === 'GET') {
        if (!this.lease) throw new ApiError('GET', req.path, 404, undefined, '');
        return structuredClone(this.lease);
      }
      if (this.failWrites) throw new ApiError(req.method, req.path, 503, undefined, 'unavailable');
      const body = req.body as Lease;
      if (body.metadata.resourceVersion !== this.lease?.metadata.resourceVersion) {
        throw new ApiError('PUT', req.path, 409, undefined, 'conflict');
      }
      return this.#store(body);
    },
    create: async (obj: Lease) => {
      if (this.lease) throw new ApiError('POST', '/leases', 409, undefined, 'exists');
      if (this.failWrites) throw new ApiError('POST', '/leases', 503, undefined, 'unavailable');
      return this.#store(obj);
    },
  } as unknown as LeaderElectorOptions['client'];
}

describe('LeaderElector in virtual time', () => {
  // The Flux defaults: lease 35 s, renew 30 s, retry 5 s; no jitter, so times are exact.
  function sim() {
    const clock = new FakeClock(Date.parse('2025-01-01T00:00:00Z'));
    const store = new MemoryLease();
    const log: string[] = [];
    const at = () => `${(clock.now() - Date.parse('2025-01-01T00:00:00Z')) / 1000}s`;
    const start = (identity: string, releaseOnCancel = true) => {
      const stop = new AbortController();
      const elector = new LeaderElector({
        client: store.client,
        namespace: 'ns',
        name: 'lease',
        identity,
        clock,
        random: () => 0.5,
        releaseOnCancel,
      });
      const run = elector.run(stop.signal, {
        onStartedLeading: () => void log.push(`${at()} ${identity} started`),
        onStoppedLeading: () => void log.push(`${at()} ${identity} stopped`),
      });
      return { elector, stop, run };
    };
    return { clock, store, log, start };
  }

  it('takes over a crashed leader exactly one lease duration after the last renewal seen', async () => {
    const { clock, store, log, start } = sim();
    const a = start('a', false);
    await clock.advanceAsync(1_000);
    const b = start('b');
    await clock.advanceAsync(60_000);
    assert.deepEqual(log, ['0s a started']);
    assert.equal(store.lease?.spec?.renewTime, '2025-01-01T00:01:00.000000Z');

    a.stop.abort(); // at 61 s; a's last renewal was at 60 s, which b saw at 61 s.
    assert.equal(await a.run, 'stopped');
    await clock.advanceAsync(60_000);
    // b polls every 5 s from 1 s: it first sees the unchanged lease at 61 s, so it may take it at 96 s.
    assert.deepEqual(log, ['0s a started', '61s a stopped', '96s b started']);
    assert.equal(store.lease?.spec?.leaseTransitions, 1);
    b.stop.abort();
    assert.equal(await b.run, 'stopped');
    assert.equal(store.lease?.spec?.holderIdentity, '');
  });

  it('gives up leading after failing to renew for the renew deadline', async () => {
    const { clock, store, log, start } = sim();
    const a = start('a');
    await clock.advanceAsync(12_000);
    store.failWrites = true; // the last good renewal was at 10 s
    await clock.advanceAsync(60_000);
    assert.equal(await a.run, 'lost');
    assert.deepEqual(log, ['0s a started', '40s a stopped']);
    assert.equal(a.elector.isLeader, false);
  });

  it('hands over at once on release', async () => {
    const { clock, store, log, start } = sim();
    const a = start('a');
    await clock.advanceAsync(1_000);
    const b = start('b');
    await clock.advanceAsync(20_000);
    a.stop.abort(); // at 21 s; b polls at 21 s, 26 s, ...
    await clock.advanceAsync(10_000);
    assert.deepEqual(log, ['0s a started', '21s a stopped', '26s b started']);
    assert.equal(store.lease?.spec?.holderIdentity, 'b');
    b.stop.abort();
    await b.run;
  });
});
