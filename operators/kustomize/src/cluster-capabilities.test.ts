// CapabilitiesCache with an injected discovery and clock (a unit test: no cluster).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeClient } from '@mooring/runtime';
import { CapabilitiesCache } from './cluster-capabilities.ts';

describe('CapabilitiesCache', () => {
  it('reads each target once per TTL, lazily, and does not keep a failed read', async () => {
    let now = 0;
    const reads: string[] = [];
    let fail = false;
    const cache = new CapabilitiesCache(
      1000,
      () => now,
      async (client) => {
        reads.push((client as unknown as { name: string }).name);
        if (fail) throw new Error('discovery failed');
        return { kubeVersion: 'v1.36.3', apiVersions: ['v1'] };
      },
    );
    const a = { name: 'a' } as unknown as KubeClient;
    const b = { name: 'b' } as unknown as KubeClient;
    const forA = cache.for(a);
    assert.deepEqual(reads, [], 'nothing is read until a chart asks');
    assert.equal((await forA()).kubeVersion, 'v1.36.3');
    await forA();
    await cache.for(b)();
    assert.deepEqual(reads, ['a', 'b']);
    now = 1500;
    fail = true;
    await assert.rejects(forA(), /discovery failed/);
    fail = false;
    await forA();
    assert.deepEqual(reads, ['a', 'b', 'a', 'a'], 'read again after the TTL, and after a failure');
  });
});
