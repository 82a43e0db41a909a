import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KINDS } from '@mooring/api';
import type { KubeObject } from '@mooring/runtime';
import { testCluster, testNamespace } from '@mooring/test/harness';
import { parseAllDocuments } from 'yaml';
import { mooring } from './run-cli.ts';

test('install --export prints manifests that all pass a server-side dry-run', async (t) => {
  const ns = await testNamespace(t, 'cli-install');
  const { client, kubeconfig } = await testCluster();
  const r = await mooring(['install', '--export', '--version', 'v9.9.9'], {
    env: { KUBECONFIG: kubeconfig },
  });
  assert.equal(r.code, 0, r.stderr);
  const objects = parseAllDocuments(r.stdout).map((d) => d.toJS() as KubeObject);
  const kinds = (k: string): KubeObject[] => objects.filter((o) => o.kind === k);
  // One CRD a kind of the registry.
  assert.equal(kinds('CustomResourceDefinition').length, KINDS.length);
  assert.deepEqual(
    kinds('Deployment')
      .map((d) => d.metadata.name)
      .sort(),
    ['image-automation', 'kustomize', 'notification', 'source'],
  );
  for (const dep of kinds('Deployment')) {
    const pod = (dep.spec as { template: { spec: Record<string, unknown> } }).template.spec as {
      securityContext: { runAsNonRoot: boolean };
      containers: {
        image: string;
        args: string[];
        securityContext: { readOnlyRootFilesystem: boolean; capabilities: { drop: string[] } };
        livenessProbe: { httpGet: { path: string } };
        readinessProbe: { httpGet: { path: string } };
        resources: { requests: Record<string, string> };
      }[];
    };
    const c = pod.containers[0]!;
    assert.equal(c.image, 'ghcr.io/mooring-dev/mooring:v9.9.9');
    assert.equal(pod.securityContext.runAsNonRoot, true);
    assert.equal(c.securityContext.readOnlyRootFilesystem, true);
    assert.deepEqual(c.securityContext.capabilities.drop, ['ALL']);
    assert.equal(c.livenessProbe.httpGet.path, '/healthz');
    assert.equal(c.readinessProbe.httpGet.path, '/readyz');
    assert.ok(c.resources.requests.cpu && c.resources.requests.memory);
    assert.ok(c.args.includes('--leader-elect'));
  }
  const services: Record<string, { port: number }[]> = Object.fromEntries(
    kinds('Service').map((s) => [
      s.metadata.name,
      (s.spec as { ports: { port: number; targetPort: string }[] }).ports,
    ]),
  );
  assert.deepEqual(
    services.source?.map((p) => p.port),
    [80],
  );
  assert.deepEqual(
    services.notification?.map((p) => p.port),
    [80, 9292],
  );
  // Only the kustomize operator may touch everything; the others never get wildcard rights.
  for (const role of kinds('ClusterRole')) {
    const wildcard = (role.rules as { resources?: string[] }[]).some((r) => r.resources?.includes('*'));
    assert.equal(
      wildcard,
      role.metadata.name === 'mooring-kustomize',
      `${role.metadata.name} wildcard rules`,
    );
  }
  // mooring-system does not exist on the shared test cluster: dry-run namespaced objects in the test's.
  for (const obj of objects) {
    if (obj.metadata.namespace) obj.metadata.namespace = ns;
    for (const s of (obj.subjects as { namespace?: string }[] | undefined) ?? [])
      if (s.namespace) s.namespace = ns;
    await client.apply(obj, { fieldManager: 'mooring-cli-test', force: true, dryRun: true });
  }
});

test('install --registry and --image-pull-secret point every operator at a private registry; a URL is refused', async () => {
  const r = await mooring([
    'install',
    '--export',
    '--version',
    'v9.9.9',
    '--registry',
    'registry.example:5000/platform',
    '--image-pull-secret',
    'regcred',
  ]);
  assert.equal(r.code, 0, r.stderr);
  const deployments = parseAllDocuments(r.stdout)
    .map((d) => d.toJS() as KubeObject)
    .filter((o) => o.kind === 'Deployment');
  assert.equal(deployments.length, 4);
  for (const dep of deployments) {
    const pod = (dep.spec as { template: { spec: Record<string, unknown> } }).template.spec as {
      containers: { image: string }[];
      imagePullSecrets: { name: string }[];
    };
    assert.equal(pod.containers[0]!.image, 'registry.example:5000/platform/mooring:v9.9.9');
    assert.deepEqual(pod.imagePullSecrets, [{ name: 'regcred' }]);
  }
  const bad = await mooring(['install', '--export', '--registry', 'https://registry.example/platform']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /^✗ --registry 'https:\/\/registry\.example\/platform' is not a registry path/);
});

test('check reports CRDs and missing operators (exit 1); --pre passes; uninstall refuses without --yes', async (t) => {
  const ns = await testNamespace(t, 'cli-check');
  const { client, kubeconfig } = await testCluster();
  const env = { KUBECONFIG: kubeconfig };
  const [check, pre, refused, dry] = await Promise.all([
    mooring(['check', '-n', ns], { env }),
    mooring(['check', '--pre'], { env }),
    mooring(['uninstall'], { env }),
    mooring(['uninstall', '--dry-run'], { env }),
  ]);
  assert.equal(check.code, 1, check.stderr);
  assert.match(check.stdout, /^✔ Kubernetes v\d+\.\d+/);
  assert.match(check.stdout, /^✔ CRD kustomizations\.kustomize\.mooring\.dev established$/m);
  assert.match(
    check.stdout,
    new RegExp(
      `^✗ Deployment ${ns}/source not found: run 'mooring install', or run the operators locally \\(npm run operators -- --kubeconfig …\\)$`,
      'm',
    ),
  );
  assert.equal(pre.code, 0, pre.stderr);
  assert.match(pre.stdout, /✔ all checks passed/);
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /refusing without confirmation, pass --yes/);
  assert.equal(dry.code, 0, dry.stderr);
  assert.match(
    dry.stdout,
    /^would delete CustomResourceDefinition kustomizations\.kustomize\.mooring\.dev$/m,
  );
  assert.match(dry.stdout, /✔ dry run: nothing was removed/);
  // Neither removed anything.
  const crd = await client.getOrUndefined({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    name: 'kustomizations.kustomize.mooring.dev',
  });
  assert.ok(crd && !crd.metadata.deletionTimestamp);
});

test('install --export into a pipe the reader closed (`| head`) ends quietly with 141, no stack trace', async () => {
  // The manifests are over 100 KB, more than a pipe holds, so the write meets the closed end.
  const r = await mooring(['install', '--export'], { closeStdout: true });
  assert.equal(r.stderr, '');
  assert.equal(r.code, 141);
});
