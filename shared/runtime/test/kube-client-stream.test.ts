import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { testCluster, testNamespace } from '@mooring/test/harness';
import { ApiError, type KubeClient } from '../src/index.ts';

let client: KubeClient;
before(async () => {
  client = (await testCluster()).client;
});

async function collect(lines: AsyncIterable<string>): Promise<string[]> {
  const out: string[] = [];
  for await (const line of lines) out.push(line);
  return out;
}

test('streamLines yields a text endpoint line by line, query included', async () => {
  const lines = await collect(client.streamLines('/readyz', { verbose: true }));
  assert.ok(lines.includes('[+]ping ok'), lines.join('\n'));
  assert.equal(lines.at(-1), 'readyz check passed');
});

test('streamLines throws the API error of a missing pod log as an ApiError', async (t) => {
  const ns = await testNamespace(t, 'stream-lines');
  await assert.rejects(
    collect(client.streamLines(`/api/v1/namespaces/${ns}/pods/missing/log`, { follow: true })),
    (err: unknown) => {
      assert.ok(err instanceof ApiError && err.isNotFound, String(err));
      assert.match(err.message, /pods "missing" not found/);
      return true;
    },
  );
});
