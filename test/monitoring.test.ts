// The monitoring pack (config/monitoring/, issue #18) against a real Prometheus: Debian's
// prometheus scrapes the source, kustomize and notification operators running in this process
// while a GitRepository and two Kustomizations reconcile (one applied, through a push webhook,
// and one that cannot build), and then every rule file passes `promtool check rules`, every
// rule evaluates without error, and every dashboard panel's every query returns a series.
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { KUSTOMIZE_API_VERSION, NOTIFICATION_API_VERSION, SOURCE_API_VERSION } from '@mooring/api';
import { kustomizeOperator } from '@mooring/kustomize-operator';
import { notificationOperator } from '@mooring/notification-operator';
import type { KubeObject } from '@mooring/runtime';
import { sourceOperator } from '@mooring/source-operator';
import {
  eventually,
  GitServer,
  startInProcessOperators,
  testCluster,
  testNamespace,
} from '@mooring/test/harness';
import { parseAllDocuments } from 'yaml';
import { repoRoot } from '../hack/lib/control-plane.ts';
import { freePort } from '../hack/lib/processes.ts';
import { flowObjects, manifests, sign } from '../operators/notification/test/push-flow-fixture.ts';

const run = promisify(execFile);
const HOOK_TOKEN = 'monitoring-hook-token-5e2a';

/** Debian's prometheus package; hack/lib/check-prerequisites.sh installs it for `npm test` as root. */
async function requireTool(tool: string): Promise<string> {
  try {
    return (await run('sh', ['-c', `command -v ${tool}`])).stdout.trim();
  } catch {
    throw new Error(
      `${tool} is not installed: install Debian's prometheus package (apt-get install -y prometheus); npm test does it when run as root (hack/lib/check-prerequisites.sh)`,
    );
  }
}

interface PrometheusRule {
  kind: 'PrometheusRule';
  metadata: { name: string };
  spec: { groups: { name: string; rules: { alert?: string; record?: string; expr: string }[] }[] };
}

interface Panel {
  title: string;
  targets?: { expr: string; refId: string }[];
}

interface Dashboard {
  title: string;
  panels: Panel[];
  templating: { list: { name: string; type: string; query?: { query: string } }[] };
}

/** config/monitoring as kustomize builds it: the rules, and the dashboards out of their ConfigMaps. */
async function monitoringPack(): Promise<{ rules: PrometheusRule[]; dashboards: Dashboard[] }> {
  const { stdout } = await run(join(repoRoot, 'bin/kustomize'), [
    'build',
    join(repoRoot, 'config/monitoring'),
  ]);
  const objects = parseAllDocuments(stdout).map(
    (d) => d.toJS() as KubeObject & { data?: Record<string, string> },
  );
  const dashboards = objects
    .filter((o) => o.kind === 'ConfigMap' && o.metadata.labels?.grafana_dashboard === '1')
    .flatMap((o) => Object.values(o.data ?? {}).map((json) => JSON.parse(json) as Dashboard));
  return {
    rules: objects.filter((o): o is KubeObject & PrometheusRule => o.kind === 'PrometheusRule'),
    dashboards,
  };
}

/** A Grafana query as Prometheus takes it: every variable matches all, `$__rate_interval` is a minute. */
function concrete(expr: string): string {
  return expr.replaceAll('$__rate_interval', '1m').replace(/\$\{?(\w+)\}?/g, '.*');
}

interface QueryAnswer {
  status: string;
  error?: string;
  data?: { resultType: string; result: unknown[] };
}

test('config/monitoring: promtool accepts the rules, they evaluate, and every dashboard panel has data from a real Prometheus', async (t) => {
  const prometheus = await requireTool('prometheus');
  const promtool = await requireTool('promtool');
  const { rules, dashboards } = await monitoringPack();
  assert.ok(rules.length > 0, 'config/monitoring builds PrometheusRules');
  assert.deepEqual(dashboards.map((d) => d.title).sort(), [
    'Mooring / Fleet overview',
    'Mooring / Object',
    'Mooring / Operators',
  ]);

  const dir = await mkdtemp(join(tmpdir(), 'mooring-monitoring-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  // (a) Each PrometheusRule's groups as the rule file the Prometheus Operator would write.
  const ruleFiles: string[] = [];
  for (const rule of rules) {
    const file = join(dir, `${rule.metadata.name}.rules.json`);
    await writeFile(file, JSON.stringify({ groups: rule.spec.groups }));
    const checked = await run(promtool, ['check', 'rules', file]).catch(
      (err: { stdout?: string; stderr?: string }) => {
        throw new Error(
          `promtool check rules refused ${rule.metadata.name}: ${err.stdout ?? ''}${err.stderr ?? ''}`,
        );
      },
    );
    assert.match(checked.stdout, /SUCCESS/);
    ruleFiles.push(file);
  }

  // The operators, a Git server, and what they reconcile.
  const { client } = await testCluster();
  const ns = await testNamespace(t, 'monitoring');
  const git = await GitServer.start();
  t.after(() => git.close());
  const storage = join(dir, 'storage');
  const receiverPort = await freePort();
  const operators = await startInProcessOperators(
    [sourceOperator(), kustomizeOperator(), notificationOperator()],
    ns,
    [
      '--storage-path',
      storage,
      '--storage-addr',
      '127.0.0.1:0',
      '--receiver-addr',
      `127.0.0.1:${receiverPort}`,
    ],
  );
  t.after(async () => {
    // The Mooring objects go while the operators still run to release their finalizers.
    for (const [apiVersion, kind, name] of [
      [KUSTOMIZE_API_VERSION, 'Kustomization', 'app'],
      [KUSTOMIZE_API_VERSION, 'Kustomization', 'broken'],
      [SOURCE_API_VERSION, 'GitRepository', 'app'],
    ] as const) {
      const key = { apiVersion, kind, namespace: ns, name };
      await client.delete(key).catch(() => {});
      await eventually(
        `${kind} ${name} deleted`,
        async () => !(await client.getOrUndefined(key)),
        20_000,
      ).catch(() => {});
    }
    await operators.stop();
  });
  const repo = await git.createRepo('app');
  const first = await repo.commit(manifests(ns, '1.0.0'), 'version 1.0.0');
  const objects = flowObjects(ns, {
    repoUrl: repo.url,
    alertUrl: 'http://127.0.0.1:9/unused',
    hookToken: HOOK_TOKEN,
    providerToken: 'unused',
  }).filter((o) => o.kind !== 'Provider' && o.kind !== 'Alert');
  objects.push({
    apiVersion: KUSTOMIZE_API_VERSION,
    kind: 'Kustomization',
    metadata: { namespace: ns, name: 'broken' },
    spec: {
      interval: '10m',
      path: './missing',
      prune: true,
      sourceRef: { kind: 'GitRepository', name: 'app' },
    },
  } as KubeObject);
  for (const o of objects) await client.create(o);

  type Ks = KubeObject & {
    status?: { lastAppliedRevision?: string; conditions?: { type: string; status: string }[] };
  };
  const ks = (name: string) =>
    client.get<Ks>({ apiVersion: KUSTOMIZE_API_VERSION, kind: 'Kustomization', namespace: ns, name });
  const applied = (commit: string) =>
    eventually(
      `Kustomization app applied main@sha1:${commit}`,
      async () => (await ks('app')).status?.lastAppliedRevision === `main@sha1:${commit}`,
      30_000,
    );
  await applied(first);
  await eventually(
    'Kustomization broken not Ready',
    async () =>
      (await ks('broken')).status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'False'),
    30_000,
  );

  // A push and its signed webhook: the second revision is timed from the webhook to applied.
  const webhookPath = await eventually(
    'the Receiver webhook path',
    async () =>
      (
        await client.get<KubeObject & { status?: { webhookPath?: string } }>({
          apiVersion: NOTIFICATION_API_VERSION,
          kind: 'Receiver',
          namespace: ns,
          name: 'github',
        })
      ).status?.webhookPath,
    20_000,
  );
  const second = await repo.commit(manifests(ns, '2.0.0'), 'version 2.0.0');
  const body = JSON.stringify({ ref: 'refs/heads/main', before: first, after: second });
  const answer = await eventually(
    'the Receiver to accept the push',
    async () => {
      const res = await fetch(`http://127.0.0.1:${receiverPort}${webhookPath}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-github-event': 'push',
          'x-github-delivery': `delivery-${second}`,
          'x-hub-signature-256': sign(HOOK_TOKEN, body),
        },
        body,
      });
      await res.arrayBuffer();
      // 503 while the Receiver's cache is still starting.
      return res.status === 503 ? undefined : res.status;
    },
    20_000,
  );
  assert.equal(answer, 200);
  await applied(second);
  const metrics = async () => (await fetch(`http://127.0.0.1:${operators.metricsPort}/metrics`)).text();
  await eventually(
    'a push-to-applied sample for Kustomization app',
    async () =>
      new RegExp(`^mooring_push_to_applied_seconds_count\\{name="app",namespace="${ns}"\\} 1$`, 'm').test(
        await metrics(),
      ),
    20_000,
  ).catch(async (err: Error) => {
    const source = await client.get({
      apiVersion: SOURCE_API_VERSION,
      kind: 'GitRepository',
      namespace: ns,
      name: 'app',
    });
    const lines = (await metrics())
      .split('\n')
      .filter((l) => l.includes('push_to_applied') || l.includes('render_cache'));
    throw new Error(
      `${err.message}\nsource: ${JSON.stringify({ meta: source.metadata.annotations, status: (source as { status?: unknown }).status })}\nks: ${JSON.stringify((await ks('app')).status)}\n${lines.join('\n')}`,
    );
  });

  // Prometheus scraping the operators every second, with the rules loaded.
  const promPort = await freePort();
  const config = join(dir, 'prometheus.yml');
  await writeFile(
    config,
    JSON.stringify({
      global: { scrape_interval: '1s', evaluation_interval: '1s' },
      rule_files: ruleFiles,
      scrape_configs: [
        {
          job_name: 'mooring',
          // As the PodMonitor: the objects' namespace label wins, and mooring_operator names the operator.
          honor_labels: true,
          static_configs: [
            { targets: [`127.0.0.1:${operators.metricsPort}`], labels: { mooring_operator: 'all-in-one' } },
          ],
        },
      ],
    }),
  );
  const server = spawn(
    prometheus,
    [
      `--config.file=${config}`,
      `--storage.tsdb.path=${join(dir, 'tsdb')}`,
      `--web.listen-address=127.0.0.1:${promPort}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let promLog = '';
  server.stderr.on('data', (d: Buffer) => {
    promLog = (promLog + d.toString()).slice(-4000);
  });
  const exited = new Promise<void>((resolve) => server.once('exit', () => resolve()));
  t.after(async () => {
    server.kill('SIGTERM');
    await exited;
  });
  const api = async (path: string): Promise<QueryAnswer> => {
    const res = await fetch(`http://127.0.0.1:${promPort}${path}`);
    return (await res.json()) as QueryAnswer;
  };
  const query = (expr: string) => api(`/api/v1/query?query=${encodeURIComponent(expr)}`);
  await eventually(
    `Prometheus scraping the operators (its log: ${promLog || 'empty'})`,
    async () => (await query('up{job="mooring"} == 1')).data?.result.length === 1,
    60_000,
  );

  // (b) Every panel's every query has a series; a panel without fails, named. Rates need two
  // scrapes of a series first, so each query is polled with a generous deadline.
  const empty: string[] = [];
  for (const dashboard of dashboards) {
    for (const panel of dashboard.panels) {
      for (const target of panel.targets ?? []) {
        const expr = concrete(target.expr);
        const found = await eventually(
          `${dashboard.title} / ${panel.title}`,
          async () => {
            const a = await query(expr);
            if (a.status !== 'success') throw new Error(`query ${expr} failed: ${a.error}`);
            return (a.data?.result.length ?? 0) > 0;
          },
          15_000,
        ).catch((err: Error) => (err.message.includes('failed:') ? Promise.reject(err) : false));
        if (!found) empty.push(`"${dashboard.title}" panel "${panel.title}" (${target.refId}): ${expr}`);
      }
    }
    // The variables' label_values(metric, label) queries list values too.
    for (const v of dashboard.templating.list.filter((l) => l.type === 'query')) {
      const m = /^label_values\((.*),\s*(\w+)\)$/.exec(v.query?.query ?? '');
      assert.ok(m, `${dashboard.title}: variable ${v.name} is a label_values query`);
      const values = await api(`/api/v1/label/${m[2]}/values?match[]=${encodeURIComponent(concrete(m[1]!))}`);
      if ((values.data as unknown as string[] | undefined)?.length === 0 || values.status !== 'success')
        empty.push(`"${dashboard.title}" variable "${v.name}" has no values`);
    }
  }
  assert.deepEqual(empty, [], `panels whose query returns nothing:\n${empty.join('\n')}`);

  // (c) Every rule evaluates: as a query, and in Prometheus's own rule evaluation.
  for (const rule of rules) {
    for (const group of rule.spec.groups) {
      for (const r of group.rules) {
        const a = await query(r.expr);
        assert.equal(a.status, 'success', `${r.alert ?? r.record}: ${a.error}`);
      }
    }
  }
  type RulesAnswer = {
    data?: {
      groups: { rules: { name: string; health: string; lastError?: string; lastEvaluation: string }[] }[];
    };
  };
  const evaluated = await eventually(
    'every rule evaluated once',
    async () => {
      const a = (await api('/api/v1/rules')) as unknown as RulesAnswer;
      const all = a.data?.groups.flatMap((g) => g.rules) ?? [];
      const want = rules.flatMap((r) => r.spec.groups.flatMap((g) => g.rules)).length;
      return all.length === want && all.every((r) => r.health !== 'unknown') ? all : undefined;
    },
    30_000,
  );
  assert.deepEqual(
    evaluated.filter((r) => r.health !== 'ok').map((r) => `${r.name}: ${r.lastError}`),
    [],
  );
  // The broken Kustomization is what the not-Ready alert is about (pending until its 10 minutes).
  const notReady = await query(rules[0]!.spec.groups[0]!.rules[0]!.expr);
  assert.deepEqual(
    ((notReady.data?.result ?? []) as { metric: Record<string, string> }[]).map((s) => s.metric.name),
    ['broken'],
  );
});
