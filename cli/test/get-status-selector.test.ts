import assert from 'node:assert/strict';
import { test } from 'node:test';
import { testCluster, testNamespace } from '@mooring/test/harness';
import { mooring } from './run-cli.ts';

test('get --status-selector ready=false lists only the failing objects; not yet reconciled counts as Unknown', async (t) => {
  const ns = await testNamespace(t, 'cli-status-selector');
  const { client, kubeconfig } = await testCluster();
  const env = { KUBECONFIG: kubeconfig };
  const at = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const ready = (status: 'True' | 'False', message: string) => ({
    conditions: [
      {
        type: 'Ready',
        status,
        reason: status === 'True' ? 'Succeeded' : 'Failed',
        message,
        lastTransitionTime: at,
      },
    ],
  });
  for (const [name, status] of [
    ['healthy', ready('True', 'stored artifact')],
    ['broken', ready('False', 'authentication required')],
    ['fresh', undefined],
  ] as const) {
    const repo = {
      apiVersion: 'source.mooring.dev/v1',
      kind: 'GitRepository',
      metadata: { name, namespace: ns },
      spec: { url: `https://git.example/${name}.git`, interval: '1h' },
    };
    await client.create(repo);
    if (status) await client.applyStatus({ ...repo, status }, { fieldManager: 'test', force: true });
  }

  const failing = await mooring(['get', 'sources', '-n', ns, '--status-selector', 'ready=false'], { env });
  assert.equal(failing.code, 0, failing.stderr);
  const names = (out: string) =>
    out
      .trim()
      .split('\n')
      .slice(1)
      .map((l) => l.split(/\s+/)[0]);
  assert.deepEqual(names(failing.stdout), ['gitrepository/broken']);
  assert.match(failing.stdout, /authentication required/);

  const unknown = await mooring(['get', 'source', 'git', '-n', ns, '--status-selector', 'Ready=Unknown'], {
    env,
  });
  assert.deepEqual(names(unknown.stdout), ['fresh']);

  const bad = await mooring(['get', 'sources', '-n', ns, '--status-selector', 'ready'], { env });
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /^✗ --status-selector 'ready' is not <condition>=<True\|False\|Unknown>/);
});
