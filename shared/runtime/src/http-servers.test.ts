import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { describe, it, type TestContext } from 'node:test';
import { HttpServers, type HttpServersOptions } from './http-servers.ts';
import { Metrics } from './metrics.ts';

async function start(t: TestContext, overrides: Partial<HttpServersOptions> = {}) {
  const metrics = new Metrics({ defaultMetrics: false });
  const servers = new HttpServers({
    metricsAddr: '127.0.0.1:0',
    healthAddr: '127.0.0.1:0',
    metrics,
    ready: () => true,
    ...overrides,
  });
  const ports = await servers.start();
  t.after(() => servers.close());
  return { servers, ports, metrics };
}

async function get(port: number, path: string, method = 'GET') {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, { method });
  return { status: res.status, body: await res.text(), type: res.headers.get('content-type') };
}

/** A port that was free a moment ago. */
async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as { port: number };
  await new Promise((resolve) => srv.close(resolve));
  return port;
}

describe('HttpServers', () => {
  it('serves /metrics in Prometheus text format on the metrics port', async (t) => {
    const { ports, metrics } = await start(t);
    metrics.observeReconcile('GitRepository', 'success', 0.1);
    const res = await get(ports.metrics, '/metrics');
    assert.equal(res.status, 200);
    assert.match(res.type ?? '', /^text\/plain; version=0\.0\.4/);
    assert.match(res.body, /mooring_reconcile_total\{kind="GitRepository",result="success"\} 1/);
    assert.equal((await get(ports.metrics, '/healthz')).status, 404);
  });

  it('/readyz follows the ready callback and /healthz the healthy callback', async (t) => {
    let ready = false;
    let healthy = true;
    const { ports } = await start(t, { ready: () => ready, healthy: async () => healthy });
    assert.notEqual(ports.health, ports.metrics);
    assert.deepEqual(await get(ports.health, '/readyz'), {
      status: 503,
      body: 'readyz check failed\n',
      type: 'text/plain; charset=utf-8',
    });
    ready = true;
    assert.equal((await get(ports.health, '/readyz')).status, 200);
    assert.equal((await get(ports.health, '/readyz?verbose')).body, 'ok\n');
    assert.equal((await get(ports.health, '/healthz')).status, 200);
    healthy = false;
    assert.equal((await get(ports.health, '/healthz')).status, 500);
    assert.equal((await get(ports.health, '/metrics')).status, 404);
  });

  it('treats a throwing probe as failing and says why', async (t) => {
    const { ports } = await start(t, {
      ready: () => {
        throw new Error('informers not synced: GitRepository');
      },
    });
    const res = await get(ports.health, '/readyz');
    assert.equal(res.status, 503);
    assert.equal(res.body, 'readyz check failed: informers not synced: GitRepository\n');
  });

  it('answers HEAD, and 405 to other methods', async (t) => {
    const { ports } = await start(t);
    assert.equal((await get(ports.health, '/healthz', 'HEAD')).status, 200);
    assert.equal((await get(ports.health, '/healthz', 'POST')).status, 405);
  });

  it('serves everything from one server when both flags name the same address', async (t) => {
    const port = await freePort();
    const { ports } = await start(t, { metricsAddr: `127.0.0.1:${port}`, healthAddr: `127.0.0.1:${port}` });
    assert.deepEqual(ports, { metrics: port, health: port });
    assert.equal((await get(port, '/metrics')).status, 200);
    assert.equal((await get(port, '/readyz')).status, 200);
  });

  it('names the address when it cannot bind, and frees what it bound', async (t) => {
    const { ports } = await start(t);
    const second = new HttpServers({
      metricsAddr: '127.0.0.1:0',
      healthAddr: `127.0.0.1:${ports.health}`,
      metrics: new Metrics({ defaultMetrics: false }),
      ready: () => true,
    });
    await assert.rejects(
      second.start(),
      new RegExp(`cannot listen on 127\\.0\\.0\\.1:${ports.health} for health: .*EADDRINUSE`),
    );
  });

  it('rejects a malformed address at construction', () => {
    assert.throws(
      () =>
        new HttpServers({
          metricsAddr: 'localhost',
          healthAddr: ':9440',
          metrics: new Metrics({ defaultMetrics: false }),
          ready: () => true,
        }),
      /invalid listen address "localhost"/,
    );
  });

  it('closes its ports, even with keep-alive connections open', async (t) => {
    const { servers, ports } = await start(t);
    await get(ports.health, '/healthz');
    await servers.close();
    await assert.rejects(get(ports.health, '/healthz'));
    const again = new HttpServers({
      metricsAddr: `127.0.0.1:${ports.metrics}`,
      healthAddr: '127.0.0.1:0',
      metrics: new Metrics({ defaultMetrics: false }),
      ready: () => true,
    });
    await again.start();
    await again.close();
  });
});
