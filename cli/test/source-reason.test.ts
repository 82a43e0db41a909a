import assert from 'node:assert/strict';
import { test } from 'node:test';
import { testCluster, testNamespace } from '@mooring/test/harness';
import { withSourceReason } from '../src/object-status.ts';
import { mooring } from './run-cli.ts';

const at = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
const ready = (status: 'True' | 'False', reason: string, message: string) => ({
  conditions: [{ type: 'Ready', status, reason, message, lastTransitionTime: at }],
});

// The statuses are written as the operators write them (the kustomize operator's words are
// operators/kustomize/src/source-ref.ts's), so the test needs no Git server and no waiting.
test("get and trace add the source's own failure to a Kustomization's 'has no artifact yet'", async (t) => {
  const ns = await testNamespace(t, 'cli-source-reason');
  const { client, kubeconfig } = await testCluster();
  const env = { KUBECONFIG: kubeconfig };
  const failure =
    "failed to checkout and determine revision: unable to clone 'https://git.example/app.git': authentication required";
  const repo = {
    apiVersion: 'source.mooring.dev/v1',
    kind: 'GitRepository',
    metadata: { name: 'app', namespace: ns },
    spec: { url: 'https://git.example/app.git', interval: '1h' },
  };
  await client.create(repo);
  await client.applyStatus(
    { ...repo, status: ready('False', 'GitOperationFailed', failure) },
    { fieldManager: 'test', force: true },
  );
  // A second source nothing has reconciled: no source operator runs.
  await client.create({ ...repo, metadata: { name: 'fresh', namespace: ns } });
  const configMap = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: 'settings',
      namespace: ns,
      labels: { 'kustomize.mooring.dev/name': 'apps', 'kustomize.mooring.dev/namespace': ns },
    },
  };
  await client.create(configMap);
  for (const [name, source] of [
    ['apps', 'app'],
    ['fresh', 'fresh'],
  ] as const) {
    const ks = {
      apiVersion: 'kustomize.mooring.dev/v1',
      kind: 'Kustomization',
      metadata: { name, namespace: ns },
      spec: { sourceRef: { kind: 'GitRepository', name: source }, interval: '1h', prune: true },
    };
    await client.create(ks);
    await client.applyStatus(
      {
        ...ks,
        status: {
          ...ready('False', 'ArtifactFailed', `GitRepository ${ns}/${source} has no artifact yet`),
          inventory: { entries: [{ id: `${ns}_settings__ConfigMap`, v: 'v1' }] },
        },
      },
      { fieldManager: 'test', force: true },
    );
  }

  const [get, fresh, trace] = await Promise.all([
    mooring(['get', 'ks', 'apps', '-n', ns], { env }),
    mooring(['get', 'ks', 'fresh', '-n', ns], { env }),
    mooring(['trace', 'configmap', 'settings', '-n', ns], { env }),
  ]);
  assert.equal(get.code, 0, get.stderr);
  assert.match(
    get.stdout,
    new RegExp(
      `False\\s+GitRepository ${ns}/app has no artifact yet: ${failure.replace(/[.()']/g, '.')}\\n$`,
    ),
  );
  assert.equal(fresh.code, 0, fresh.stderr);
  assert.match(
    fresh.stdout,
    /has no artifact yet: it has not been reconciled yet \(is the source operator running\?\)\n$/,
  );
  assert.equal(trace.code, 0, trace.stderr);
  assert.match(
    trace.stdout,
    new RegExp(
      `^Ready: +False - GitRepository ${ns}/app has no artifact yet: failed to checkout .*authentication required$`,
      'm',
    ),
  );
});

test("a 'has no artifact yet' that already carries the source's reason (the operator adds it) is left as it is", () => {
  const source = {
    apiVersion: 'source.mooring.dev/v1',
    kind: 'GitRepository',
    metadata: { name: 'app', namespace: 'team' },
    status: ready('False', 'GitOperationFailed', 'authentication required'),
  };
  const said = 'GitRepository team/app has no artifact yet: authentication required';
  assert.equal(withSourceReason(said, source), said);
  assert.equal(
    withSourceReason('GitRepository team/app has no artifact yet', source),
    'GitRepository team/app has no artifact yet: authentication required',
  );
  assert.equal(
    withSourceReason('Applied revision: main@sha1:abc', source),
    'Applied revision: main@sha1:abc',
  );
});
