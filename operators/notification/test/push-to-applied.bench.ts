import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type net from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { KUSTOMIZE_API_VERSION, NOTIFICATION_API_VERSION, SOURCE_API_VERSION } from '@mooring/api';
import type { KubeObject } from '@mooring/runtime';
import {
  eventually,
  GitServer,
  type InProcessOperators,
  testCluster,
  uniqueName,
} from '@mooring/test/harness';
import { testLocation } from '../../../hack/lib/test-location.ts';
import { flowObjects, manifests, sign, startFlowOperators } from './push-flow-fixture.ts';

const PUSHES = 30;
const HOOK_TOKEN = 'bench-hook-token';
const PROVIDER_TOKEN = 'bench-provider-token';
// An Alert sends a burst of 10, then one notification every 5 s (alert-throttle.ts defaults);
// pushes start this far apart so the throttle never holds back an alert being timed.
const PUSH_PERIOD_MS = 5_200;
/** Kustomizations reconciling on the same operator during the loaded run (issue #21's last target). */
const STEADY = Number(process.env.MOORING_BENCH_STEADY ?? 1000);
const STEADY_INTERVAL = '1m';
const STEADY_INTERVAL_S = 60;
/** Creations and deletions in flight at once: 1000 one by one would take minutes of round trips. */
const STEADY_BATCH = 50;

const log = (line: string) => process.stderr.write(`${line}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
};

/** Runs `each` over `items`, `STEADY_BATCH` at a time. */
async function inBatches<T>(items: readonly T[], each: (item: T) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < items.length; i += STEADY_BATCH)
    await Promise.all(items.slice(i, i + STEADY_BATCH).map(each));
}

/** The Kustomization counters of the operators' `/metrics`, summed over results. */
interface ReconcileCounters {
  count: number;
  seconds: number;
}
async function kustomizationReconciles(metricsPort: number): Promise<ReconcileCounters> {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  const sum = (metric: string) => {
    let total = 0;
    for (const m of text.matchAll(new RegExp(`^${metric}\\{([^}]*)\\} (\\S+)$`, 'gm')))
      if (m[1]!.includes('kind="Kustomization"')) total += Number(m[2]);
    return total;
  };
  return {
    count: sum('mooring_reconcile_total'),
    seconds: sum('mooring_reconcile_duration_seconds_sum'),
  };
}

/** What one timed run of pushes measured. */
interface PushRun {
  answered: number[];
  applied: number[];
  alerted: number[];
  windowS: number;
  /** Kustomization reconciles finished during the window, the timed ones included. */
  reconciles: number;
  /** Mean time one of those reconciles took. */
  meanReconcileMs: number;
  /** CPU this process (the three operators and the bench's own watch and sink) used, in cores. */
  cpuCores: number;
  loadBefore: number;
  loadAfter: number;
}

/** When the alert for each revision arrived at the provider's address, and how many were badly signed. */
const alertAt = new Map<string, number>();
let badSignatures = 0;
const sink = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const at = performance.now();
    const body = Buffer.concat(chunks).toString('utf8');
    if (req.headers['x-signature'] !== sign(PROVIDER_TOKEN, body)) badSignatures++;
    try {
      const event = JSON.parse(body) as {
        involvedObject?: { kind?: string };
        metadata?: { revision?: string };
      };
      const rev = event.metadata?.revision;
      if (event.involvedObject?.kind === 'Kustomization' && rev && !alertAt.has(rev)) alertAt.set(rev, at);
    } catch {
      badSignatures++;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{}');
  });
});
await new Promise<void>((r) => sink.listen(0, '127.0.0.1', r));
const sinkUrl = `http://127.0.0.1:${(sink.address() as net.AddressInfo).port}`;

// hack/run-tests.ts stops the test plane when the last run registered beside it ends; this bench
// uses it for ten minutes beside such runs (it lost its API server mid-run), so it registers too.
const planeUser = process.env.KUBECONFIG
  ? undefined
  : join(`${testLocation().dir}.users`, String(process.pid));
if (planeUser) {
  mkdirSync(join(planeUser, '..'), { recursive: true });
  writeFileSync(planeUser, '');
}
const { client } = await testCluster();
const ns = uniqueName('bench-push-applied');
await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
const git = await GitServer.start();
const storage = await mkdtemp(join(tmpdir(), 'mooring-bench-'));
const watchStop = new AbortController();
let operators: InProcessOperators | undefined;
let watching: Promise<void> | undefined;
const steadyNames = Array.from({ length: STEADY }, (_, i) => `steady-${String(i).padStart(4, '0')}`);
let steadyCreated = false;
try {
  const flow = await startFlowOperators(ns, storage);
  operators = flow.operators;
  const { receiverPort, metricsPort } = flow;
  const repo = await git.createRepo('app');
  let commit = await repo.commit(manifests(ns, 0), 'version 0');

  type Conditioned = KubeObject & {
    status?: {
      conditions?: { type: string; status: string }[];
      webhookPath?: string;
      lastAppliedRevision?: string;
    };
  };
  const isReady = (o: Conditioned) =>
    o.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
  const ready = (apiVersion: string, kind: string, name: string) =>
    eventually(
      `${kind} ${name} Ready`,
      async () => {
        const o = await client.get<Conditioned>({ apiVersion, kind, namespace: ns, name });
        return isReady(o) ? o : undefined;
      },
      60_000,
    );
  const [hookSecret, alertSecret, provider, alert, gitRepository, kustomization, receiverObject] =
    flowObjects(ns, {
      repoUrl: repo.url,
      alertUrl: `${sinkUrl}/mooring`,
      hookToken: HOOK_TOKEN,
      providerToken: PROVIDER_TOKEN,
    });
  // Each applied revision sends two events, the change set and 'Applied revision: …', and the Alert's
  // throttle refills one every 5 s: both would run it dry by the tenth push and then lose a timed
  // alert now and then. The change set comes first, so it is the one kept.
  const alertSpec = (alert as KubeObject & { spec: Record<string, unknown> }).spec;
  const timedAlert = {
    ...alert!,
    spec: { ...alertSpec, exclusionList: ['^Applied revision'] },
  } as KubeObject;
  for (const o of [hookSecret!, alertSecret!, provider!, timedAlert]) await client.create(o);
  await ready(NOTIFICATION_API_VERSION, 'Provider', 'ops-hook');
  await ready(NOTIFICATION_API_VERSION, 'Alert', 'applied');
  await client.create(gitRepository!);
  // The Kustomization after the artifact, so the first sync spends no alert on "no artifact yet".
  await ready(SOURCE_API_VERSION, 'GitRepository', 'app');
  await client.create(kustomization!);
  await client.create(receiverObject!);
  const receiver = await ready(NOTIFICATION_API_VERSION, 'Receiver', 'github');
  const webhookPath = receiver.status?.webhookPath;
  if (!webhookPath) throw new Error('the Receiver published no webhook path');
  const ksKey = { apiVersion: KUSTOMIZE_API_VERSION, kind: 'Kustomization', namespace: ns, name: 'app' };
  await eventually(
    'the first sync',
    async () => (await client.get<Conditioned>(ksKey)).status?.lastAppliedRevision === `main@sha1:${commit}`,
    60_000,
  );
  log(`first sync applied main@sha1:${commit.slice(0, 7)}`);

  // When each lastAppliedRevision of the timed Kustomization was first seen, from a watch.
  const appliedAt = new Map<string, number>();
  const list = await client.list(KUSTOMIZE_API_VERSION, 'Kustomization', { namespace: ns });
  watching = (async () => {
    for await (const e of client.watch<Conditioned>(KUSTOMIZE_API_VERSION, 'Kustomization', {
      namespace: ns,
      resourceVersion: list.metadata.resourceVersion,
      fieldSelector: 'metadata.name=app',
      signal: watchStop.signal,
    })) {
      const rev = e.object.status?.lastAppliedRevision;
      if (rev && !appliedAt.has(rev)) appliedAt.set(rev, performance.now());
    }
  })().catch((err: Error) => {
    if (!watchStop.signal.aborted) log(`watch ended: ${err.message}`);
  });
  const waitFor = async (what: string, seen: Map<string, number>, key: string, timeoutMs: number) => {
    const deadline = Date.now() + timeoutMs;
    while (!seen.has(key)) {
      if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
      await sleep(5);
    }
    return seen.get(key)!;
  };

  let pushed = 0;
  const timePushes = async (label: string): Promise<PushRun> => {
    const run: PushRun = {
      answered: [],
      applied: [],
      alerted: [],
      windowS: 0,
      reconciles: 0,
      meanReconcileMs: 0,
      cpuCores: 0,
      loadBefore: loadavg()[0]!,
      loadAfter: 0,
    };
    const counters = await kustomizationReconciles(metricsPort);
    const cpu = process.cpuUsage();
    const windowStart = performance.now();
    for (let i = 1; i <= PUSHES; i++) {
      const start = performance.now();
      const before = commit;
      pushed++;
      commit = await repo.commit(manifests(ns, pushed), `version ${pushed}`);
      const t0 = performance.now();
      const body = JSON.stringify({
        ref: 'refs/heads/main',
        before,
        after: commit,
        repository: { full_name: 'acme/app', clone_url: repo.url },
      });
      const res = await fetch(`http://127.0.0.1:${receiverPort}${webhookPath}`, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          'X-GitHub-Event': 'push',
          'X-Hub-Signature-256': sign(HOOK_TOKEN, body),
        },
        body,
      });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`webhook ${pushed} answered ${res.status}`);
      run.answered.push(performance.now() - t0);
      const rev = `main@sha1:${commit}`;
      run.applied.push((await waitFor(`push ${pushed} applied`, appliedAt, rev, 30_000)) - t0);
      run.alerted.push((await waitFor(`push ${pushed}'s alert`, alertAt, rev, 30_000)) - t0);
      log(
        `${label} push ${i}: webhook ${run.answered.at(-1)!.toFixed(0)} ms, applied ${run.applied.at(-1)!.toFixed(0)} ms, alert ${run.alerted.at(-1)!.toFixed(0)} ms`,
      );
      // The last push's wait is the window too: steady reconciles go on through it.
      await sleep(Math.max(0, PUSH_PERIOD_MS - (performance.now() - start)));
    }
    const windowMs = performance.now() - windowStart;
    const used = process.cpuUsage(cpu);
    const after = await kustomizationReconciles(metricsPort);
    run.windowS = windowMs / 1000;
    run.reconciles = after.count - counters.count;
    run.meanReconcileMs =
      run.reconciles > 0 ? ((after.seconds - counters.seconds) / run.reconciles) * 1000 : 0;
    run.cpuCores = (used.user + used.system) / 1000 / windowMs;
    run.loadAfter = loadavg()[0]!;
    return run;
  };

  const unloaded = await timePushes('unloaded');

  // The steady Kustomizations' own applies send events too; the Alert keeps to the timed one so
  // their first applies do not spend its throttle's burst before a timed alert.
  await client.mergePatch(
    { apiVersion: NOTIFICATION_API_VERSION, kind: 'Alert', namespace: ns, name: 'applied' },
    { spec: { eventSources: [{ kind: 'Kustomization', name: 'app' }] } },
  );
  const steadyRepo = await git.createRepo('steady');
  await steadyRepo.commit(
    {
      'kustomization.yaml': 'resources:\n  - config.yaml\n',
      'config.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: config\n  namespace: ${ns}\ndata:\n  steady: "true"\n`,
    },
    'steady',
  );
  await client.create({
    apiVersion: SOURCE_API_VERSION,
    kind: 'GitRepository',
    metadata: { namespace: ns, name: 'steady' },
    spec: { url: steadyRepo.url, interval: STEADY_INTERVAL, ref: { branch: 'main' } },
  } as KubeObject);
  await ready(SOURCE_API_VERSION, 'GitRepository', 'steady');
  const createStart = performance.now();
  steadyCreated = true;
  await inBatches(steadyNames, (name) =>
    client.create({
      apiVersion: KUSTOMIZE_API_VERSION,
      kind: 'Kustomization',
      metadata: { namespace: ns, name, labels: { 'bench.mooring.dev/steady': 'true' } },
      // Each applies the same ConfigMap under its own name, so every one owns one object.
      spec: {
        interval: STEADY_INTERVAL,
        prune: true,
        path: './',
        namePrefix: `${name}-`,
        sourceRef: { kind: 'GitRepository', name: 'steady' },
      },
    } as KubeObject),
  );
  log(
    `created ${STEADY} steady Kustomizations in ${((performance.now() - createStart) / 1000).toFixed(1)} s`,
  );
  const steadyList = () =>
    client.list<Conditioned>(KUSTOMIZE_API_VERSION, 'Kustomization', {
      namespace: ns,
      labelSelector: 'bench.mooring.dev/steady=true',
    });
  for (const deadline = Date.now() + 20 * 60_000; ; ) {
    const readyCount = (await steadyList()).items.filter(isReady).length;
    if (readyCount === STEADY) break;
    if (Date.now() > deadline)
      throw new Error(`only ${readyCount} of ${STEADY} steady Kustomizations became Ready`);
    log(`${readyCount} of ${STEADY} steady Kustomizations Ready`);
    await sleep(5_000);
  }
  const steadyReadyS = (performance.now() - createStart) / 1000;
  log(`all ${STEADY} steady Kustomizations Ready ${steadyReadyS.toFixed(1)} s after the first was created`);
  // Their first passes are over; from here each reconciles once per interval, spread by when it was created.
  const loaded = await timePushes(`${STEADY} steady`);
  if (badSignatures) throw new Error(`${badSignatures} alerts arrived without a valid X-Signature`);

  const f = (x: number) => (x >= 1000 ? `${(x / 1000).toFixed(2)} s` : `${x.toFixed(0)} ms`);
  const row = (what: string, a: number[], b: number[]) =>
    `| ${what} | ${f(pct(a, 50))} | ${f(pct(a, 95))} | ${f(Math.max(...a))} | ${f(pct(b, 50))} | ${f(pct(b, 95))} | ${f(Math.max(...b))} |`;
  // The timed Kustomization's own reconciles (one per push) are not the steady ones'.
  const loadRow = (what: string, r: PushRun) =>
    `| ${what} | ${r.windowS.toFixed(0)} s | ${(Math.max(0, r.reconciles - PUSHES) / r.windowS).toFixed(1)} | ${r.meanReconcileMs.toFixed(0)} ms | ${r.cpuCores.toFixed(2)} | ${r.loadBefore.toFixed(1)} → ${r.loadAfter.toFixed(1)} |`;
  const p50 = pct(unloaded.applied, 50);
  const loadedP50 = pct(loaded.applied, 50);
  console.log(
    [
      `## Push to applied, through the webhook (issue #7, end to end; issue #21 with ${STEADY} steady Kustomizations)`,
      '',
      `What: ${PUSHES} commits, one after another, each changing a ConfigMap's \`data.version\`, pushed to the loopback Git test server; after each \`git push\` returns, a GitHub-style push webhook signed with \`X-Hub-Signature-256\` goes to a \`github\` Receiver, which requests a reconcile of the GitRepository (interval 10m, so only the webhook makes it fetch); the Kustomization (interval 10m) applies the new revision, and its event reaches a \`generic-hmac\` Provider (a loopback HTTP sink, \`X-Signature\` checked on every alert) through an Alert on Kustomizations. Timed from the end of the push to (a) the webhook's 200, (b) \`status.lastAppliedRevision\` equal to the pushed commit, seen on a watch of the Kustomization, and (c) that revision's alert arriving at the sink. The source, kustomize and notification operators run in one Node process with default settings (\`--concurrent 4\`) against kube-apiserver + etcd on loopback, on a shared 2-core machine (the API server competes for the same CPUs). Pushes start ${(PUSH_PERIOD_MS / 1000).toFixed(1)} s apart and the Alert excludes the \`Applied revision: …\` message, so one alert per push stays within the Alert's default throttle (a burst of 10, then one every 5 s): with both of each revision's events, the throttle ran dry after about ten pushes and then dropped a timed alert now and then.`,
      '',
      `Two runs in one process, one after the other: first the timed Kustomization alone on the operators, then with ${STEADY} more Kustomizations on the same operators, all Ready before the first timed push (${steadyReadyS.toFixed(0)} s from the first creation, ${STEADY_BATCH} at a time), each on one shared GitRepository (interval ${STEADY_INTERVAL}) applying the same one ConfigMap under its own \`namePrefix\`, with \`interval: ${STEADY_INTERVAL}\` and \`prune: true\` — about ${(STEADY / STEADY_INTERVAL_S).toFixed(1)} no-op reconciles a second beside the pushes. In the loaded run the Alert names only the timed Kustomization, so the steady ones' first applies do not spend its throttle.`,
      '',
      `| from the end of \`git push\` to | p50 | p95 | max | p50, ${STEADY} steady | p95, ${STEADY} steady | max, ${STEADY} steady |`,
      '| --- | --- | --- | --- | --- | --- | --- |',
      row('webhook answered 200 (verified, reconcile requested)', unloaded.answered, loaded.answered),
      row('Kustomization `lastAppliedRevision` = the commit', unloaded.applied, loaded.applied),
      row('alert received by the generic-hmac Provider', unloaded.alerted, loaded.alerted),
      '',
      "During each timed window (from the first push to the end of the last push period), from the operators' `/metrics` (`mooring_reconcile_total` and `mooring_reconcile_duration_seconds` of kind Kustomization, less the timed one's own reconcile per push) and `process.cpuUsage()` of the bench process, which runs the three operators:",
      '',
      '| run | window | other Kustomization reconciles / s | mean Kustomization reconcile | process CPU (cores) | load average (1 min), start → end |',
      '| --- | --- | --- | --- | --- | --- |',
      loadRow('timed Kustomization alone', unloaded),
      loadRow(`${STEADY} steady Kustomizations`, loaded),
      '',
      `Target: push to applied p50 under 1 s — ${p50 < 1000 ? 'met' : 'not met'} alone (${f(p50)}), ${loadedP50 < 1000 ? 'met' : 'not met'} with ${STEADY} steady Kustomizations on the same operator (${f(loadedP50)}). The alert timed in (c) is the Kustomization's change-set event (\`ConfigMap/<ns>/app-config configured\`, reason \`Progressing\`, \`metadata.revision\` = the commit), which comes before \`Applied revision: …\`.`,
      '',
      `Reproduce: \`npm run bench -- push-to-applied\` (starts or reuses \`.mooring/test-control-plane\`; \`MOORING_BENCH_STEADY\` sets the number of steady Kustomizations, ${STEADY} here); the flow is asserted by \`operators/notification/test/push-to-applied.test.ts\`.`,
    ].join('\n'),
  );
} finally {
  watchStop.abort();
  await watching;
  // The Mooring objects go while the operators still run, so their finalizers are released and the
  // steady ConfigMaps pruned: the plain test plane has no namespace controller to empty the namespace.
  if (steadyCreated) {
    await inBatches(steadyNames, (name) =>
      client
        .delete({ apiVersion: KUSTOMIZE_API_VERSION, kind: 'Kustomization', namespace: ns, name })
        .catch(() => {}),
    );
    for (const deadline = Date.now() + 10 * 60_000; Date.now() < deadline; ) {
      const left = (
        await client
          .list(KUSTOMIZE_API_VERSION, 'Kustomization', {
            namespace: ns,
            labelSelector: 'bench.mooring.dev/steady=true',
          })
          .catch(() => undefined)
      )?.items.length;
      if (left === 0) break;
      log(`${left ?? '?'} steady Kustomizations left to delete`);
      await sleep(5_000);
    }
  }
  for (const [kind, name] of [
    ['Kustomization', 'app'],
    ['GitRepository', 'app'],
    ['GitRepository', 'steady'],
  ] as const) {
    const key = {
      apiVersion: kind === 'Kustomization' ? KUSTOMIZE_API_VERSION : SOURCE_API_VERSION,
      kind,
      namespace: ns,
      name,
    };
    await client.delete(key).catch(() => {});
    await eventually(
      `${kind} ${name} deleted`,
      async () => !(await client.getOrUndefined(key)),
      20_000,
    ).catch(() => {});
  }
  await operators?.stop();
  await git.close();
  await rm(storage, { recursive: true, force: true });
  await new Promise<void>((r) => {
    sink.close(() => r());
    sink.closeAllConnections();
  });
  await client.delete({ apiVersion: 'v1', kind: 'Namespace', name: ns }).catch(() => {});
  client.close();
  if (planeUser) rmSync(planeUser, { force: true });
}
