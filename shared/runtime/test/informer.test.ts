import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { down, locationAt, restartApiServer, up } from '../../../hack/lib/control-plane.ts';
import { KubeClient, type KubeObject } from '../src/index.ts';
import { Informer } from '../src/informer.ts';
import { eventually } from './toy.ts';

type ConfigMap = KubeObject & { data?: Record<string, string> };
const cm = (name: string, value: string): ConfigMap => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'watched' },
  data: { value },
});

// This test restarts its API server, so it runs its own control plane rather than the suite's.
test('an informer whose watch is cut by an API server restart resumes and misses no change', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'mooring-informer-'));
  const loc = locationAt(dir);
  try {
    const running = await up(loc);
    const client = await KubeClient.fromKubeconfig(running.kubeconfig);
    await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'watched' } });
    await client.create(cm('a', '1'));
    await client.create(cm('b', '1'));

    const informer = new Informer<ConfigMap>(client, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      namespace: 'watched',
      initialBackoffMs: 100,
      maxBackoffMs: 400,
    });
    const seen: string[] = [];
    informer.on((e) => seen.push(`${e.type}:${e.object.metadata.name}`));
    await informer.start();
    assert.deepEqual(
      informer
        .list()
        .map((o) => o.metadata.name)
        .sort(),
      ['a', 'b'],
    );

    // A change while the server is down cannot be made through it; the changes right after the
    // restart race the informer's reconnect, which is the case that loses events when resuming
    // from the wrong resourceVersion.
    await restartApiServer(loc);
    await client.create(cm('c', '1'));
    await client.apply(cm('a', '2'), { fieldManager: 'test', force: true });
    await client.delete({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'watched', name: 'b' });

    await eventually('the cache to match the server', async () => {
      const names = informer
        .list()
        .map((o) => o.metadata.name)
        .sort()
        .join();
      return names === 'a,c' && informer.get('watched/a')?.data?.value === '2';
    });
    assert.ok(
      seen.includes('added:c') && seen.includes('updated:a') && seen.includes('deleted:b'),
      seen.join(' '),
    );
    assert.ok(informer.stats.watches >= 2, 'the watch was never re-established');
    await informer.stop();
    client.close();
  } finally {
    await down(loc);
    rmSync(dir, { recursive: true, force: true });
  }
});
