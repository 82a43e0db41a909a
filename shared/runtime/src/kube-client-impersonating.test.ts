import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { test } from 'node:test';
import { KubeClient } from './kube-client.ts';
import type { ApiTransport } from './transport.ts';

interface Seen {
  path: string;
  user: string | string[] | undefined;
  groups: string | string[] | undefined;
}

/** Answers every request with an empty object, recording its path and impersonation headers. */
function recordingTransport(seen: Seen[], closed: { count: number }): ApiTransport {
  return {
    async send(req) {
      seen.push({
        path: req.path,
        user: req.headers['Impersonate-User'],
        groups: req.headers['Impersonate-Group'],
      });
      return {
        statusCode: 200,
        body: '{"resources":[{"name":"configmaps","kind":"ConfigMap","namespaced":true}]}',
      };
    },
    async openStream(req) {
      seen.push({
        path: req.path,
        user: req.headers['Impersonate-User'],
        groups: req.headers['Impersonate-Group'],
      });
      return { statusCode: 200, body: Readable.from([]) };
    },
    close() {
      closed.count++;
    },
  };
}

test('an impersonating client sends every request as the user, shares discovery, and leaves the connection open', async () => {
  const seen: Seen[] = [];
  const closed = { count: 0 };
  const client = new KubeClient(recordingTransport(seen, closed));
  const jane = client.impersonating({ user: 'jane', groups: ['team-a', 'system:authenticated'] });
  const key = { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'a', name: 'settings' };

  await client.get(key);
  await jane.get(key);
  await jane.apply(
    { ...key, metadata: { name: 'settings', namespace: 'a' } },
    { fieldManager: 'm', dryRun: true },
  );
  await jane.getOrUndefined(key);
  for await (const _ of jane.watch('v1', 'ConfigMap', { namespace: 'a' })) break;
  // A request that names its own identity keeps it.
  await jane.request({ method: 'GET', path: '/api/v1/namespaces', impersonate: { user: 'bob' } });

  assert.deepEqual(
    seen.map((s) => [s.path.replace(/\?.*/, ''), s.user ?? 'itself', s.groups ?? []]),
    [
      ['/api/v1', 'itself', []], // discovery once, by the client that owns the cache
      ['/api/v1/namespaces/a/configmaps/settings', 'itself', []],
      ['/api/v1/namespaces/a/configmaps/settings', 'jane', ['team-a', 'system:authenticated']],
      ['/api/v1/namespaces/a/configmaps/settings', 'jane', ['team-a', 'system:authenticated']],
      ['/api/v1/namespaces/a/configmaps/settings', 'jane', ['team-a', 'system:authenticated']],
      ['/api/v1/namespaces/a/configmaps', 'jane', ['team-a', 'system:authenticated']],
      ['/api/v1/namespaces', 'bob', []],
    ],
  );
  assert.equal(jane.mapper, client.mapper);
  jane.close();
  assert.equal(closed.count, 0, "closing the user's client leaves the shared connection open");
  client.close();
  assert.equal(closed.count, 1);
});
