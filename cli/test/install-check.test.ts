// `mooring check` on planes where the operator Deployments do not tell the truth: operators run
// locally (the demo's Lease mooring-local-operators says so), or Deployments whose pods kwok's fake
// nodes mark Ready without running anything. The plain test plane runs no controllers, so the test
// writes the Deployment status, the pods and the nodes itself; -n puts everything in its namespace.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatMicroTime, type KubeClient, type KubeObject } from '@mooring/runtime';
import { testCluster, testNamespace, uniqueName } from '@mooring/test/harness';
import { mooring } from './run-cli.ts';

const FIELD_MANAGER = 'mooring-cli-test';
const DAY_MS = 86_400_000;

/** The demo's marker (hack/demo-marker.ts), renewed at `renewedAt` and valid for `seconds`. */
async function lease(
  client: KubeClient,
  namespace: string,
  renewedAt: number,
  seconds: number,
  operators = 'source,kustomize,notification',
): Promise<void> {
  await client.apply(
    {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: {
        name: 'mooring-local-operators',
        namespace,
        annotations: {
          'mooring.dev/operators': operators,
          'mooring.dev/watch-namespace': '',
          'mooring.dev/run-by': 'npm run demo',
        },
      },
      spec: {
        holderIdentity: 'devbox_4242',
        leaseDurationSeconds: seconds,
        acquireTime: formatMicroTime(renewedAt),
        renewTime: formatMicroTime(renewedAt),
      },
    } as KubeObject,
    { fieldManager: FIELD_MANAGER, force: true },
  );
}

/** A Node the test owns (cluster-scoped, so deleted after the test); `kwok` makes it one of kwok's. */
async function node(
  t: { after: (fn: () => Promise<void>) => void },
  client: KubeClient,
  kind: 'kwok-label' | 'kwok-annotation' | 'real',
): Promise<string> {
  const name = uniqueName('check-node');
  await client.create({
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels: kind === 'kwok-label' ? { type: 'kwok' } : {},
      annotations: kind === 'kwok-annotation' ? { 'kwok.x-k8s.io/node': 'fake' } : {},
    },
  });
  t.after(async () => {
    await client.delete({ apiVersion: 'v1', kind: 'Node', name });
  });
  return name;
}

/** An operator Deployment that reports Available, with one Ready pod bound to `nodeName`. */
async function runningDeployment(
  client: KubeClient,
  namespace: string,
  name: string,
  nodeName: string,
): Promise<void> {
  const labels = { 'app.kubernetes.io/name': name };
  await client.apply(
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name, namespace },
      spec: {
        replicas: 1,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: { containers: [{ name: 'manager', image: 'ghcr.io/mooring-dev/mooring:v0.0.0' }] },
        },
      },
    } as KubeObject,
    { fieldManager: FIELD_MANAGER, force: true },
  );
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  await client.applyStatus(
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name, namespace },
      status: {
        replicas: 1,
        readyReplicas: 1,
        availableReplicas: 1,
        updatedReplicas: 1,
        conditions: [
          {
            type: 'Available',
            status: 'True',
            reason: 'MinimumReplicasAvailable',
            lastTransitionTime: now,
            lastUpdateTime: now,
          },
        ],
      },
    } as KubeObject,
    { fieldManager: FIELD_MANAGER, force: true },
  );
  const pod = uniqueName(name);
  await client.create({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: pod, namespace, labels },
    spec: { nodeName, containers: [{ name: 'manager', image: 'ghcr.io/mooring-dev/mooring:v0.0.0' }] },
  });
  await client.applyStatus(
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: pod, namespace },
      status: {
        phase: 'Running',
        conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: now }],
      },
    } as KubeObject,
    { fieldManager: FIELD_MANAGER, force: true },
  );
}

const line = (stdout: string, pattern: RegExp): void => assert.match(stdout, pattern, stdout);

test('check: operators the fresh local-operators Lease lists pass; one it does not list, and pods on kwok nodes, do not', async (t) => {
  const ns = await testNamespace(t, 'cli-check-local');
  const { client, kubeconfig } = await testCluster();
  // Valid for a day, so however slowly the CLI starts the Lease is still fresh when it reads it.
  await lease(client, ns, Date.now(), DAY_MS / 1000);
  const [kwokLabelled, kwokAnnotated, real] = await Promise.all([
    node(t, client, 'kwok-label'),
    node(t, client, 'kwok-annotation'),
    node(t, client, 'real'),
  ]);
  // `source` and `kustomize` were installed too (`mooring install` on the demo's plane), onto kwok.
  await runningDeployment(client, ns, 'source', kwokLabelled);
  await runningDeployment(client, ns, 'kustomize', kwokAnnotated);
  const r = await mooring(['check', '-n', ns], { env: { KUBECONFIG: kubeconfig } });
  assert.equal(r.code, 1, r.stderr);
  line(r.stdout, /^⚠ source: its pods run on kwok's fake nodes, which run no containers$/m);
  line(r.stdout, /^⚠ kustomize: its pods run on kwok's fake nodes, which run no containers$/m);
  line(
    r.stdout,
    /^✔ notification operator runs outside the cluster \(npm run demo, devbox_4242, all namespaces\)$/m,
  );
  line(
    r.stdout,
    /^✗ image-automation operator is not run by the local operators \(npm run demo\): run npm run operators, or mooring install$/m,
  );
  assert.doesNotMatch(r.stdout, /all checks passed/);
  assert.match(r.stderr, /^✗ check failed$/m);

  // Its pod moved to a node that runs containers (the old one terminating, which no kubelet ends
  // here): the same Deployment is available.
  const [old] = (
    await client.list('v1', 'Pod', { namespace: ns, labelSelector: 'app.kubernetes.io/name=source' })
  ).items;
  await client.delete({ apiVersion: 'v1', kind: 'Pod', namespace: ns, name: old!.metadata.name! });
  await runningDeployment(client, ns, 'source', real);
  const again = await mooring(['check', '-n', ns], { env: { KUBECONFIG: kubeconfig } });
  line(again.stdout, new RegExp(`^✔ Deployment ${ns}/source available$`, 'm'));
});

test('check passes when the fresh local-operators Lease lists every operator', async (t) => {
  const ns = await testNamespace(t, 'cli-check-all-local');
  const { client, kubeconfig } = await testCluster();
  await lease(client, ns, Date.now(), DAY_MS / 1000, 'source,kustomize,notification,image-automation');
  const r = await mooring(['check', '-n', ns], { env: { KUBECONFIG: kubeconfig } });
  assert.equal(r.code, 0, `${r.stdout}${r.stderr}`);
  for (const op of ['source', 'kustomize', 'notification', 'image-automation'])
    line(
      r.stdout,
      new RegExp(`^✔ ${op} operator runs outside the cluster \\(npm run demo, devbox_4242`, 'm'),
    );
  line(r.stdout, /^✔ all checks passed$/m);
});

test('check on an expired local-operators Lease says they stopped renewing, and since when', async (t) => {
  const ns = await testNamespace(t, 'cli-check-expired');
  const { client, kubeconfig } = await testCluster();
  // Last renewed three days ago (kill -9: the demo could not delete it).
  await lease(client, ns, Date.now() - 3 * DAY_MS, 30);
  const r = await mooring(['check', '-n', ns], { env: { KUBECONFIG: kubeconfig } });
  assert.equal(r.code, 1, r.stderr);
  line(
    r.stdout,
    new RegExp(
      `^✗ source operator: no Deployment ${ns}/source, and the local operators stopped renewing 3d ago: restart npm run demo$`,
      'm',
    ),
  );
  // The Lease never listed image-automation: restarting the demo would not bring it.
  line(
    r.stdout,
    new RegExp(
      `^✗ Deployment ${ns}/image-automation not found: run 'mooring install', or run the operators locally \\(npm run operators -- --kubeconfig …\\)$`,
      'm',
    ),
  );
});
