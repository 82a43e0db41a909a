// A Kustomization waiting on a source that cannot fetch says why, not only that it waits.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { SOURCE_API_VERSION } from '@mooring/api';
import type { KubeObject } from '@mooring/runtime';
import { testCluster, uniqueName } from '@mooring/test/harness';
import { condition, createKustomization, type Stack, startStack, waitForKustomization } from './fixture.ts';

let stack: Stack;
before(async () => {
  stack = await startStack('ks-source-failure');
});
after(() => stack?.stop());

test("'has no artifact yet' carries the source's own failure", async () => {
  const { client } = await testCluster();
  const source = uniqueName('unreachable');
  await client.create({
    apiVersion: SOURCE_API_VERSION,
    kind: 'GitRepository',
    metadata: { name: source, namespace: stack.namespace },
    spec: { url: 'http://127.0.0.1:1/nothing.git', interval: '10m', ref: { branch: 'main' } },
  } as KubeObject);
  const name = uniqueName('waits');
  await createKustomization(stack, name, { sourceRef: { kind: 'GitRepository', name: source }, path: './' });
  const waiting = await waitForKustomization(stack.namespace, name, 'False', (k) =>
    /has no artifact yet: /.test(condition(k, 'Ready')?.message ?? ''),
  );
  assert.match(
    condition(waiting, 'Ready')!.message,
    new RegExp(`^GitRepository ${stack.namespace}/${source} has no artifact yet: .*127\\.0\\.0\\.1`),
  );
});
