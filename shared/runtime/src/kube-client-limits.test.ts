import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { test } from 'node:test';
import { KubeClient } from './kube-client.ts';
import type { ApiTransport } from './transport.ts';

/** Answers every GET at once with an empty object, recording who asked. */
function recordingTransport(seen: string[]): ApiTransport {
  return {
    async send(req) {
      const user = req.headers['Impersonate-User'];
      seen.push(typeof user === 'string' ? user : 'operator');
      return { statusCode: 200, body: '{}' };
    },
    async openStream() {
      return { statusCode: 200, body: Readable.from([]) };
    },
    close() {},
  };
}

test("an impersonated user's requests draw on a budget of their own, not the operator's", async () => {
  const seen: string[] = [];
  // One request per 5 s, no burst beyond one: the operator's second request must wait.
  const client = new KubeClient(recordingTransport(seen), { qps: 0.2, burst: 1 });
  const tenant = { user: 'system:serviceaccount:team-a:deployer' };
  await client.request({ method: 'GET', path: '/api/v1/namespaces/a' });
  const operatorSecond = client.request({ method: 'GET', path: '/api/v1/namespaces/b' });
  await client.request({ method: 'GET', path: '/api/v1/namespaces/c', impersonate: tenant });
  await client.request({
    method: 'GET',
    path: '/api/v1/namespaces/d',
    impersonate: { user: 'system:serviceaccount:team-b:deployer' },
  });
  // Both tenants were answered while the operator's second request still waits for its token.
  assert.deepEqual(seen, [
    'operator',
    'system:serviceaccount:team-a:deployer',
    'system:serviceaccount:team-b:deployer',
  ]);
  // The tenant's own budget is limited too: its second request waits as the operator's does.
  let tenantSecondDone = false;
  const tenantSecond = client
    .request({ method: 'GET', path: '/api/v1/namespaces/e', impersonate: tenant })
    .then(() => {
      tenantSecondDone = true;
    });
  await new Promise((r) => setImmediate(r));
  assert.equal(tenantSecondDone, false);
  await Promise.all([operatorSecond, tenantSecond]);
  client.close();
});
