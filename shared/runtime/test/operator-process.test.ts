import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { testCluster, testNamespace } from '@mooring/test/harness';
import { type KubeClient, type KubeObject, type Lease, leaseName } from '../src/index.ts';
import { eventually, installToyCrd, type Toy, toy } from './toy.ts';

let client: KubeClient;
before(async () => {
  client = (await testCluster()).client;
  await installToyCrd(client);
});

interface OperatorProcess {
  child: ChildProcess;
  lines: string[];
  exited: Promise<number | null>;
}

/** Starts the toy operator as its own process, logging JSON lines we keep for assertions. */
function startOperator(
  id: string,
  namespace: string,
  args: string[] = [],
  env: Record<string, string> = {},
): OperatorProcess {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      join(import.meta.dirname, 'toy-operator.ts'),
      `--watch-namespace=${namespace}`,
      '--metrics-addr=127.0.0.1:0',
      '--health-addr=127.0.0.1:0',
      '--shutdown-timeout=20s',
      ...args,
    ],
    { env: { ...process.env, TOY_ID: id, ...env }, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const lines: string[] = [];
  createInterface({ input: child.stdout! }).on('line', (l) => lines.push(l));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, lines, exited };
}

const getToy = (namespace: string, name: string) =>
  client.get<Toy>({ apiVersion: 'test.mooring.dev/v1', kind: 'Toy', namespace, name });

async function reconciledBy(namespace: string, name: string, timeoutMs = 15_000): Promise<string> {
  return eventually(
    `${name} reconciled`,
    async () => (await getToy(namespace, name)).status?.reconciledBy as string,
    timeoutMs,
  );
}

/** The leader identity a replica logged at start (`operator started`). */
function identityOf(op: OperatorProcess): string | undefined {
  for (const line of op.lines) {
    try {
      const entry = JSON.parse(line) as { msg?: string; identity?: string };
      if (entry.msg === 'operator started' && entry.identity) return entry.identity;
    } catch {
      // not a JSON log line
    }
  }
  return undefined;
}

const LEASE_MS = 2_000;

const getLease = (namespace: string) =>
  client.get<Lease>({
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    namespace,
    name: 'mooring-toy-leader-election',
  });

describe('operator processes', () => {
  test('with leader election only one replica reconciles, and the other takes over after a SIGKILL', async (t) => {
    const ns = await testNamespace(t, 'leader');
    const leaseArgs = ['--leader-elect', `--leader-election-namespace=${ns}`];
    const leaseEnv = { TOY_LEASE_MS: String(LEASE_MS) };
    const a = startOperator('replica-a', ns, leaseArgs, leaseEnv);
    t.after(() => a.child.kill('SIGKILL'));
    await client.create(toy(ns, 'first', { interval: '1h' }));
    assert.equal(await reconciledBy(ns, 'first'), 'replica-a');

    const b = startOperator('replica-b', ns, leaseArgs, leaseEnv);
    t.after(() => b.child.kill('SIGKILL'));
    const [idA, idB] = await eventually('both replicas to log their identity', async () => {
      const ids = [identityOf(a), identityOf(b)];
      return ids.every(Boolean) ? (ids as string[]) : undefined;
    });
    await sleep(1_500);
    await client.create(toy(ns, 'second', { interval: '1h' }));
    assert.equal(
      await reconciledBy(ns, 'second'),
      'replica-a',
      'the standby reconciled while the leader lived',
    );
    // Counted, not timed: the standby never took the lease while the leader renewed it.
    const held = await getLease(ns);
    assert.equal(held.spec?.holderIdentity, idA);
    assert.equal(held.spec?.leaseTransitions, 0);

    a.child.kill('SIGKILL');
    await a.exited;
    await client.create(toy(ns, 'third', { interval: '1h' }));
    // How soon is the leader election's own business (its virtual-time tests pin it to the
    // millisecond); here the bound is only patience: many leases' worth on a loaded machine.
    assert.equal(await reconciledBy(ns, 'third', 15 * LEASE_MS), 'replica-b');
    // Exactly one handover, a to b: a SIGKILL releases nothing, and no one else held it between.
    const taken = await getLease(ns);
    assert.equal(taken.spec?.holderIdentity, idB);
    assert.equal(taken.spec?.leaseTransitions, 1);
    assert.ok(
      b.lines.some((l) => l.includes('acquired leader lease')),
      'the standby logged taking the lease',
    );

    b.child.kill('SIGTERM');
    assert.equal(await b.exited, 0);
  });

  test('shards (--watch-label-selector) under leader election each lead on their own Lease; a killed shard stops only its own objects', async (t) => {
    const ns = await testNamespace(t, 'shards');
    const shardArgs = (shard: string) => [
      '--leader-elect',
      `--leader-election-namespace=${ns}`,
      `--watch-label-selector=shard=${shard}`,
    ];
    const leaseEnv = { TOY_LEASE_MS: String(LEASE_MS) };
    const a = startOperator('shard-a', ns, shardArgs('a'), leaseEnv);
    t.after(() => a.child.kill('SIGKILL'));
    const b = startOperator('shard-b', ns, shardArgs('b'), leaseEnv);
    t.after(() => b.child.kill('SIGKILL'));
    const inShard = (name: string, shard: string): Toy => {
      const obj = toy(ns, name, { interval: '1h' });
      obj.metadata.labels = { shard };
      return obj;
    };
    await client.create(inShard('a-1', 'a'));
    await client.create(inShard('b-1', 'b'));
    assert.equal(await reconciledBy(ns, 'a-1'), 'shard-a');
    assert.equal(await reconciledBy(ns, 'b-1'), 'shard-b');
    const leases = await client.list<Lease>('coordination.k8s.io/v1', 'Lease', { namespace: ns });
    assert.deepEqual(
      leases.items.map((l) => l.metadata.name).sort(),
      [leaseName('toy', 'shard=a'), leaseName('toy', 'shard=b')].sort(),
    );

    a.child.kill('SIGKILL');
    await a.exited;
    await client.create(inShard('b-2', 'b'));
    assert.equal(await reconciledBy(ns, 'b-2'), 'shard-b');
    b.child.kill('SIGTERM');
    assert.equal(await b.exited, 0);
  });

  test('SIGTERM during a long reconcile lets it finish, writes its status and exits 0', async (t) => {
    const ns = await testNamespace(t, 'sigterm');
    const op = startOperator('solo', ns);
    t.after(() => op.child.kill('SIGKILL'));
    await client.create(toy(ns, 'slow', { workMs: 3_000, interval: '1h' }));
    await eventually(
      'the reconcile to start',
      async () => op.lines.some((l) => l.includes('toy reconcile started')),
      15_000,
    );
    op.child.kill('SIGTERM');
    assert.equal(await op.exited, 0);
    const live = await getToy(ns, 'slow');
    assert.equal(live.status?.count, 1);
    assert.equal(live.status?.conditions?.find((c) => c.type === 'Ready')?.status, 'True');
    // The Ready transition was recorded as a Kubernetes Event, flushed before the exit.
    const events = await client.list<KubeObject & { reason: string; involvedObject: { name: string } }>(
      'v1',
      'Event',
      {
        namespace: ns,
      },
    );
    assert.ok(
      events.items.some((e) => e.involvedObject.name === 'slow' && e.reason === 'ReconciliationSucceeded'),
      `no ReconciliationSucceeded event: ${events.items.map((e) => e.reason).join(', ')}`,
    );
  });
});
