import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import { register } from 'prom-client';
import { instrumentTransport } from './instrumented-transport.ts';
import { describeMetrics, Metrics } from './metrics.ts';
import type { ApiTransport } from './transport.ts';

/** The sample lines of one metric, without HELP/TYPE comments. */
async function samples(metrics: Metrics, name: string): Promise<string[]> {
  const text = await metrics.render();
  return text.split('\n').filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `));
}

describe('Metrics', () => {
  it('counts and times reconciles by kind and result', async () => {
    const m = new Metrics({ defaultMetrics: false });
    m.observeReconcile('GitRepository', 'success', 0.2);
    m.observeReconcile('GitRepository', 'success', 0.4);
    m.observeReconcile('GitRepository', 'error', 3);
    assert.deepEqual(await samples(m, 'mooring_reconcile_total'), [
      'mooring_reconcile_total{kind="GitRepository",result="success"} 2',
      'mooring_reconcile_total{kind="GitRepository",result="error"} 1',
    ]);
    const count = await samples(m, 'mooring_reconcile_duration_seconds_count');
    assert.deepEqual(count, [
      'mooring_reconcile_duration_seconds_count{kind="GitRepository",result="success"} 2',
      'mooring_reconcile_duration_seconds_count{kind="GitRepository",result="error"} 1',
    ]);
    const sum = await samples(m, 'mooring_reconcile_duration_seconds_sum');
    assert.ok(
      sum.some((l) => /result="success"\} 0\.6/.test(l)),
      sum.join('\n'),
    );
  });

  it('sets the queue depth gauge', async () => {
    const m = new Metrics({ defaultMetrics: false });
    m.setQueueDepth('Kustomization', 7);
    m.setQueueDepth('Kustomization', 3);
    assert.deepEqual(await samples(m, 'mooring_workqueue_depth'), [
      'mooring_workqueue_depth{kind="Kustomization"} 3',
    ]);
  });

  it('exports conditions as 1 for the current status and 0 for the others', async () => {
    const m = new Metrics({ defaultMetrics: false });
    m.setConditions('Kustomization', 'apps', 'web', [
      { type: 'Ready', status: 'False' },
      { type: 'Reconciling', status: 'True' },
    ]);
    const lines = await samples(m, 'mooring_condition');
    const prefix = 'mooring_condition{kind="Kustomization",namespace="apps",name="web"';
    assert.deepEqual(lines.sort(), [
      `${prefix},type="Ready",status="False"} 1`,
      `${prefix},type="Ready",status="True"} 0`,
      `${prefix},type="Ready",status="Unknown"} 0`,
      `${prefix},type="Reconciling",status="False"} 0`,
      `${prefix},type="Reconciling",status="True"} 1`,
      `${prefix},type="Reconciling",status="Unknown"} 0`,
    ]);

    // Reconciling goes away and Ready turns True: Reconciling's series are removed.
    m.setConditions('Kustomization', 'apps', 'web', [{ type: 'Ready', status: 'True' }]);
    assert.deepEqual((await samples(m, 'mooring_condition')).sort(), [
      `${prefix},type="Ready",status="False"} 0`,
      `${prefix},type="Ready",status="True"} 1`,
      `${prefix},type="Ready",status="Unknown"} 0`,
    ]);
  });

  it('removes every series of a deleted object and leaves the others', async () => {
    const m = new Metrics({ defaultMetrics: false });
    m.setConditions('GitRepository', 'a', 'one', [{ type: 'Ready', status: 'True' }]);
    m.setConditions('GitRepository', 'a', 'two', [{ type: 'Ready', status: 'Unknown' }]);
    m.deleteObject('GitRepository', 'a', 'one');
    m.deleteObject('GitRepository', 'a', 'never-seen');
    const lines = await samples(m, 'mooring_condition');
    assert.equal(lines.length, 3);
    assert.ok(lines.every((l) => l.includes('name="two"')));
    m.setConditions('GitRepository', 'a', 'two', []);
    assert.deepEqual(await samples(m, 'mooring_condition'), []);
  });

  it('times reconcile steps by kind and step', async () => {
    const m = new Metrics({ defaultMetrics: false });
    m.observeStep('Kustomization', 'check health', 2);
    m.observeStep('Kustomization', 'check health', 1);
    m.observeStep('Kustomization', 'apply', 0.5);
    const lines = await samples(m, 'mooring_reconcile_step_duration_seconds_sum');
    assert.deepEqual(lines.sort(), [
      'mooring_reconcile_step_duration_seconds_sum{kind="Kustomization",step="apply"} 0.5',
      'mooring_reconcile_step_duration_seconds_sum{kind="Kustomization",step="check health"} 3',
    ]);
  });

  it('times API requests by verb and code', async () => {
    const m = new Metrics({ defaultMetrics: false });
    m.observeApiRequest('GET', 200, 0.01);
    m.observeApiRequest('PATCH', 409, 0.02);
    m.observeApiRequest('GET', 'error', 1);
    const lines = await samples(m, 'mooring_api_request_duration_seconds_count');
    assert.deepEqual(lines.sort(), [
      'mooring_api_request_duration_seconds_count{verb="GET",code="200"} 1',
      'mooring_api_request_duration_seconds_count{verb="GET",code="error"} 1',
      'mooring_api_request_duration_seconds_count{verb="PATCH",code="409"} 1',
    ]);
  });

  it('owns its registry: default metrics land there, not in the global one', async () => {
    const a = new Metrics();
    const b = new Metrics();
    a.observeReconcile('X', 'success', 1);
    assert.match(await a.render(), /^process_cpu_user_seconds_total /m);
    assert.match(await a.render(), /^nodejs_eventloop_lag_seconds /m);
    assert.deepEqual(await samples(b, 'mooring_reconcile_total'), []);
    assert.equal(await register.getSingleMetricAsString('mooring_reconcile_total').catch(() => ''), '');
    assert.match(a.contentType, /^text\/plain/);
  });
});

describe('per-object metrics', () => {
  const ks = { namespace: 'apps', name: 'web' };

  it("times each object's reconciles under Flux's name and keeps its last result", async () => {
    const m = new Metrics({ defaultMetrics: false });
    m.observeReconcile('Kustomization', 'error', 2, ks);
    m.observeReconcile('Kustomization', 'success', 0.5, ks);
    assert.deepEqual(await samples(m, 'gotk_reconcile_duration_seconds_count'), [
      'gotk_reconcile_duration_seconds_count{kind="Kustomization",name="web",namespace="apps"} 2',
    ]);
    assert.deepEqual((await samples(m, 'mooring_reconcile_last_result')).sort(), [
      'mooring_reconcile_last_result{kind="Kustomization",name="web",namespace="apps",result="dependency"} 0',
      'mooring_reconcile_last_result{kind="Kustomization",name="web",namespace="apps",result="error"} 0',
      'mooring_reconcile_last_result{kind="Kustomization",name="web",namespace="apps",result="stalled"} 0',
      'mooring_reconcile_last_result{kind="Kustomization",name="web",namespace="apps",result="success"} 1',
    ]);
  });

  it('turns a result outside the usual four to 0 when the next reconcile ends otherwise', async () => {
    const m = new Metrics({ defaultMetrics: false });
    m.observeReconcile('Kustomization', 'requeue', 1, ks);
    m.observeReconcile('Kustomization', 'success', 1, ks);
    const lines = await samples(m, 'mooring_reconcile_last_result');
    assert.ok(
      lines.includes(
        'mooring_reconcile_last_result{kind="Kustomization",name="web",namespace="apps",result="requeue"} 0',
      ),
    );
    assert.equal(lines.filter((l) => l.endsWith(' 1')).length, 1, lines.join('\n'));
  });

  it('escapes label values and exports the per-object gauges as JSON as prom-client does', async () => {
    const m = new Metrics({ defaultMetrics: false });
    const odd = 'q"uote\\d';
    m.setConditions('Kustomization', 'apps', odd, [{ type: 'Ready', status: 'Odd' }]);
    m.setConditions('Kustomization', 'apps', odd, [{ type: 'Ready', status: 'True' }]);
    assert.deepEqual((await samples(m, 'mooring_condition')).sort(), [
      'mooring_condition{kind="Kustomization",namespace="apps",name="q\\"uote\\\\d",type="Ready",status="False"} 0',
      'mooring_condition{kind="Kustomization",namespace="apps",name="q\\"uote\\\\d",type="Ready",status="Odd"} 0',
      'mooring_condition{kind="Kustomization",namespace="apps",name="q\\"uote\\\\d",type="Ready",status="True"} 1',
      'mooring_condition{kind="Kustomization",namespace="apps",name="q\\"uote\\\\d",type="Ready",status="Unknown"} 0',
    ]);
    const json = await m.registry.getMetricsAsJSON();
    const condition = json.find((metric) => metric.name === 'gotk_reconcile_condition');
    assert.equal(condition?.type, 'gauge');
    assert.deepEqual(
      condition?.values.find((v) => v.value === 1),
      {
        labels: { kind: 'Kustomization', namespace: 'apps', name: odd, type: 'Ready', status: 'True' },
        value: 1,
      },
    );
  });

  it('exports conditions under gotk_reconcile_condition too', async () => {
    const m = new Metrics({ defaultMetrics: false });
    m.setConditions('GitRepository', 'a', 'repo', [{ type: 'Ready', status: 'False' }]);
    assert.ok(
      (await samples(m, 'gotk_reconcile_condition')).includes(
        'gotk_reconcile_condition{kind="GitRepository",namespace="a",name="repo",type="Ready",status="False"} 1',
      ),
    );
  });

  it('keeps one resource info series per object and sets the suspend gauge', async () => {
    const m = new Metrics({ defaultMetrics: false });
    const info = {
      ready: 'True',
      suspended: false,
      revision: 'main@sha1:1111',
      sourceKind: 'GitRepository',
      sourceName: 'platform',
    };
    m.setResourceInfo('Kustomization', 'apps', 'web', info);
    m.setResourceInfo('Kustomization', 'apps', 'web', {
      ...info,
      revision: 'main@sha1:2222',
      suspended: true,
    });
    assert.deepEqual(await samples(m, 'gotk_resource_info'), [
      'gotk_resource_info{kind="Kustomization",name="web",namespace="apps",ready="True",suspended="true",revision="main@sha1:2222",source_kind="GitRepository",source_name="platform"} 1',
    ]);
    assert.deepEqual(await samples(m, 'gotk_suspend_status'), [
      'gotk_suspend_status{kind="Kustomization",name="web",namespace="apps"} 1',
    ]);
  });

  it('observes push-to-applied latency per Kustomization', async () => {
    const m = new Metrics({ defaultMetrics: false });
    m.observePushToApplied('apps', 'web', 4);
    assert.deepEqual(await samples(m, 'mooring_push_to_applied_seconds_count'), [
      'mooring_push_to_applied_seconds_count{name="web",namespace="apps"} 1',
    ]);
    assert.ok(
      (await samples(m, 'mooring_push_to_applied_seconds_bucket')).includes(
        'mooring_push_to_applied_seconds_bucket{le="5",name="web",namespace="apps"} 1',
      ),
    );
  });

  it('counts render cache hits and misses, both present from the start', async () => {
    const m = new Metrics({ defaultMetrics: false });
    assert.deepEqual(await samples(m, 'mooring_render_cache_requests_total'), [
      'mooring_render_cache_requests_total{result="hit"} 0',
      'mooring_render_cache_requests_total{result="miss"} 0',
    ]);
    m.observeRenderCache(false);
    m.observeRenderCache(true);
    m.observeRenderCache(true);
    assert.deepEqual(await samples(m, 'mooring_render_cache_requests_total'), [
      'mooring_render_cache_requests_total{result="hit"} 2',
      'mooring_render_cache_requests_total{result="miss"} 1',
    ]);
  });

  it("removes every per-object series of a deleted object and leaves the others'", async () => {
    const m = new Metrics({ defaultMetrics: false });
    const info = { ready: 'True', suspended: false, revision: 'r', sourceKind: '', sourceName: '' };
    for (const name of ['web', 'db']) {
      m.observeReconcile('Kustomization', 'success', 1, { namespace: 'apps', name });
      m.setConditions('Kustomization', 'apps', name, [{ type: 'Ready', status: 'True' }]);
      m.setResourceInfo('Kustomization', 'apps', name, info);
      m.observePushToApplied('apps', name, 3);
    }
    m.deleteObject('Kustomization', 'apps', 'web');
    const text = await m.render();
    const perObject = text.split('\n').filter((l) => /^(gotk_|mooring_reconcile_last|mooring_push)/.test(l));
    assert.ok(perObject.length > 0);
    assert.deepEqual(
      perObject.filter((l) => l.includes('name="web"')),
      [],
    );
    assert.ok(perObject.some((l) => l.startsWith('gotk_resource_info{') && l.includes('name="db"')));
    assert.ok(
      perObject.some(
        (l) => l.startsWith('mooring_push_to_applied_seconds_count{') && l.includes('name="db"'),
      ),
    );
  });
});

describe('describeMetrics', () => {
  it('is a markdown table naming every metric', () => {
    const table = describeMetrics();
    const lines = table.split('\n');
    assert.equal(lines[0], '| metric | type | labels | meaning |');
    for (const name of [
      'mooring_reconcile_duration_seconds',
      'mooring_reconcile_total',
      'mooring_workqueue_depth',
      'mooring_condition',
      'mooring_api_request_duration_seconds',
      'gotk_reconcile_duration_seconds',
      'gotk_reconcile_condition',
      'gotk_suspend_status',
      'gotk_resource_info',
      'mooring_reconcile_last_result',
      'mooring_push_to_applied_seconds',
      'mooring_render_cache_requests_total',
    ]) {
      assert.ok(table.includes(`\`${name}\``), name);
    }
  });
});

describe('instrumentTransport', () => {
  it('times requests with their status code, failures as error, and watches as WATCH', async () => {
    const seen: [string, string | number, number][] = [];
    let now = 1_000;
    const clock = {
      now: () => now,
      setTimeout: () => {
        throw new Error('unused');
      },
      clearTimeout: () => {},
      sleep: async () => {},
    };
    const inner: ApiTransport = {
      async send(req) {
        now += 250;
        if (req.path === '/fail') throw new Error('ECONNREFUSED');
        return { statusCode: req.method === 'GET' ? 200 : 409, body: '' };
      },
      async openStream() {
        now += 50;
        return { statusCode: 200, body: Readable.from([]) };
      },
      close() {},
    };
    const t = instrumentTransport(
      inner,
      { observeApiRequest: (v, c, s) => void seen.push([v, c, s]) },
      clock,
    );
    await t.send({ method: 'GET', path: '/api', headers: {} });
    await t.send({ method: 'PUT', path: '/api', headers: {} });
    await assert.rejects(t.send({ method: 'GET', path: '/fail', headers: {} }), /ECONNREFUSED/);
    await t.openStream({ method: 'GET', path: '/watch', headers: {} });
    assert.deepEqual(seen, [
      ['GET', 200, 0.25],
      ['PUT', 409, 0.25],
      ['GET', 'error', 0.25],
      ['WATCH', 200, 0.05],
    ]);
  });
});
