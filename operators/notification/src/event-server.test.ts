import assert from 'node:assert/strict';
import { request } from 'node:http';
import { test } from 'node:test';
import { silentLogger } from '@mooring/runtime';
import type { InboundEvent } from './event.ts';
import { EventServer } from './event-server.ts';

function post(port: number, body: string | Buffer, method = 'POST') {
  return new Promise<number>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/any/path', method }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const event = (message: string, revision = 'r1') =>
  JSON.stringify({
    involvedObject: {
      kind: 'GitRepository',
      namespace: 'apps',
      name: 'app',
      apiVersion: 'source.mooring.dev/v1',
    },
    severity: 'info',
    message,
    reason: 'Succeeded',
    metadata: { revision },
    reportingController: 'mooring-source',
  });

test('event server: 202 and dispatch, 429 for duplicates until the interval passes, 400/405/413 for bad requests', async (t) => {
  let now = 0;
  const got: InboundEvent[] = [];
  let release: () => void = () => {};
  const blocked = new Promise<void>((r) => {
    release = r;
  });
  const server = new EventServer({
    // The answer must not wait for the dispatch: this one blocks until the end of the test.
    dispatch: async (e) => {
      got.push(e);
      await blocked;
    },
    log: silentLogger(),
    rateLimitIntervalMs: 60_000,
    maxBodyBytes: 1024,
    now: () => now,
  });
  const port = await server.listen(0, '127.0.0.1');
  t.after(async () => {
    release();
    await server.close();
  });

  assert.equal(await post(port, event('one')), 202);
  assert.equal(got.length, 1);
  assert.equal(got[0]!.metadata.revision, 'r1');
  assert.equal(await post(port, event('one')), 429);
  assert.equal(await post(port, event('one', 'r2')), 202, 'a new revision is not a duplicate');
  now = 60_000;
  assert.equal(await post(port, event('one')), 202, 'after the interval the event goes again');
  assert.equal(got.length, 3);
  assert.equal(await post(port, '{'), 400);
  assert.equal(await post(port, '{"message":"x"}'), 400);
  assert.equal(await post(port, Buffer.alloc(1025, 0x20)), 413);
  assert.equal(await post(port, '', 'GET'), 405);
  assert.equal(got.length, 3);
});
