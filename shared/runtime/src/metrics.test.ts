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
