// `mooring why` and the DependencyNotReady message, on the control plane with workloads and the
// source and kustomize operators in this process: a chain A → B → C whose C reads a GitRepository
// that cannot fetch, and a HelmRelease waiting on a Kustomization whose health check never passes.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { HELM_API_VERSION, KUSTOMIZE_API_VERSION, SOURCE_API_VERSION } from '@mooring/api';
import type { KubeObject, MooringObject } from '@mooring/runtime';
import { eventually, uniqueName } from '@mooring/test/harness';
import {
  chartFiles,
  chartSpec,
  condition,
  type HelmStack,
  startHelmStack,
} from '../../operators/kustomize/test/helm-release-fixture.ts';
import { mooring } from './run-cli.ts';

// Scheduled nowhere (no node has the label), so it never becomes available and its health check waits.
const UNSCHEDULABLE = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: registry
spec:
  replicas: 1
  selector:
    matchLabels: {app: registry}
  template:
    metadata:
      labels: {app: registry}
    spec:
      nodeSelector: {mooring.dev/no-such-node: "true"}
      containers:
        - name: registry
          image: registry.example/registry:1.0.0
`;

let stack: HelmStack;
let source: string;
before(async () => {
  stack = await startHelmStack('cli-why');
  source = uniqueName('platform');
  const repo = await stack.git.createRepo(source);
  await repo.commit({
    ...chartFiles(),
    'good/cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: good\n',
    'slow/deployment.yaml': UNSCHEDULABLE,
  });
  const gitRepository = (name: string, url: string) =>
    stack.client.create({
      apiVersion: SOURCE_API_VERSION,
      kind: 'GitRepository',
      metadata: { name, namespace: stack.namespace },
      spec: { url, interval: '10m', timeout: '20s', ref: { branch: 'main' } },
    } as KubeObject);
  await gitRepository(source, repo.url);
  // The same server, a repository it does not have: every fetch fails.
  await gitRepository('broken', repo.url.replace(new RegExp(`${source}(\\.git)?$`), 'no-such-repo.git'));
});
after(() => stack?.stop());

const kustomization = (name: string, spec: Record<string, unknown>) =>
  stack.client.create({
    apiVersion: KUSTOMIZE_API_VERSION,
    kind: 'Kustomization',
    metadata: { name, namespace: stack.namespace },
    spec: { interval: '10m', prune: true, sourceRef: { kind: 'GitRepository', name: source }, ...spec },
  } as KubeObject);
const readyOf = async (apiVersion: string, kind: string, name: string) =>
  condition(
    await stack.client.getOrUndefined<MooringObject>({ apiVersion, kind, namespace: stack.namespace, name }),
    'Ready',
  );

test('why A names B, C and the error of the source of C; the Ready message of A names the same chain', async () => {
  const ns = stack.namespace;
  const env = { KUBECONFIG: stack.kubeconfig };
  await kustomization('chain-a', { path: './good', dependsOn: [{ name: 'chain-b' }] });
  await kustomization('chain-b', { path: './good', dependsOn: [{ name: 'chain-c' }] });
  await kustomization('chain-c', { path: './good', sourceRef: { kind: 'GitRepository', name: 'broken' } });
  await kustomization('chain-ok', { path: './good' });

  let last: string | undefined;
  const message = await eventually(
    "A's Ready message naming B, C and the source",
    async () => {
      const ready = await readyOf(KUSTOMIZE_API_VERSION, 'Kustomization', 'chain-a');
      if (ready?.message !== last) {
        last = ready?.message;
        console.log(`chain-a Ready: ${last}`);
      }
      return ready?.reason === 'DependencyNotReady' && /GitRepository .*broken/.test(ready.message)
        ? ready.message
        : undefined;
    },
    30_000,
  );
  assert.match(
    message,
    new RegExp(
      `^dependency '${ns}/chain-b' is not ready: Kustomization ${ns}/chain-b depends on Kustomization ${ns}/chain-c, which waits for its source GitRepository ${ns}/broken, which failed: `,
    ),
  );

  const why = await mooring(['why', 'ks', 'chain-a', '-n', ns], { env });
  assert.equal(why.code, 1, `${why.stdout}${why.stderr}`);
  const lines = why.stdout.trimEnd().split('\n');
  assert.match(
    lines[0] ?? '',
    new RegExp(
      `^✗ Kustomization ${ns}/chain-a depends on Kustomization ${ns}/chain-b, which depends on Kustomization ${ns}/chain-c, which waits for its source GitRepository ${ns}/broken, which failed: \\w+: .*no-such-repo`,
    ),
  );
  assert.deepEqual(lines.slice(1, 4), [
    `  → Kustomization ${ns}/chain-a depends on Kustomization ${ns}/chain-b`,
    `  → Kustomization ${ns}/chain-b depends on Kustomization ${ns}/chain-c`,
    `  → Kustomization ${ns}/chain-c reads its source GitRepository ${ns}/broken`,
  ]);
  assert.match(lines[4] ?? '', new RegExp(`^  → GitRepository ${ns}/broken failed: \\w+: .*no-such-repo`));

  const json = await mooring(['why', 'kustomization', 'chain-a', '-n', ns, '-o', 'json'], { env });
  assert.equal(json.code, 1);
  assert.deepEqual(JSON.parse(json.stdout).blocking, {
    kind: 'GitRepository',
    namespace: ns,
    name: 'broken',
  });

  await eventually(
    'chain-ok Ready',
    async () => (await readyOf(KUSTOMIZE_API_VERSION, 'Kustomization', 'chain-ok'))?.status === 'True',
    120_000,
  );
  const ok = await mooring(['why', 'ks', 'chain-ok', '-n', ns], { env });
  assert.equal(ok.code, 0, ok.stdout);
  assert.match(ok.stdout, new RegExp(`^✔ Kustomization ${ns}/chain-ok is Ready: Applied revision: `));

  const missing = await mooring(['why', 'ks', 'nope', '-n', ns], { env });
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, new RegExp(`Kustomization ${ns}/nope not found`));
});

test('why of a HelmRelease on a Kustomization that waits on health names the Deployment and its kstatus message', async () => {
  const ns = stack.namespace;
  const env = { KUBECONFIG: stack.kubeconfig };
  await kustomization('infra', { path: './slow', wait: true, timeout: '30m' });
  await stack.client.create({
    apiVersion: HELM_API_VERSION,
    kind: 'HelmRelease',
    metadata: { name: 'db', namespace: ns },
    spec: {
      interval: '10m',
      chart: chartSpec(source),
      dependsOn: [{ kind: 'Kustomization', name: 'infra' }],
    },
  } as KubeObject);

  const ready = await eventually(
    'the HelmRelease waiting on infra',
    async () => {
      const r = await readyOf(HELM_API_VERSION, 'HelmRelease', 'db');
      return r?.reason === 'DependencyNotReady' ? r : undefined;
    },
    120_000,
  );
  assert.match(
    ready.message,
    new RegExp(`^dependency '${ns}/infra' is not ready: Kustomization ${ns}/infra `),
  );

  const why = await eventually(
    'why naming the health check',
    async () => {
      const r = await mooring(['why', 'hr', 'db', '-n', ns], { env });
      return /health check/.test(r.stdout) ? r : undefined;
    },
    120_000,
  );
  assert.equal(why.code, 1, why.stderr);
  assert.match(
    why.stdout,
    new RegExp(
      `^✗ HelmRelease ${ns}/db depends on Kustomization ${ns}/infra, which waits for the health check of Deployment ${ns}/registry: InProgress, \\S`,
    ),
  );
});
