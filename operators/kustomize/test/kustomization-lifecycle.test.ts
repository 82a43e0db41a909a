// biome-ignore-all lint/suspicious/noTemplateCurlyInString: Flux's ${var} syntax is the subject here, not a template mistake.
// Kustomization dependencies, deletion policies, impersonation, substitution and health checks,
// end to end against the real API server.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { KubeClient, type KubeObject } from '@mooring/runtime';
import { eventually, testCluster, uniqueName } from '@mooring/test/harness';
import { down, locationAt, up } from '../../../hack/lib/control-plane.ts';
import {
  condition,
  configMap,
  createKustomization,
  getKustomization,
  getObject,
  gitSource,
  type Stack,
  startStack,
  waitForKustomization,
} from './fixture.ts';

let stack: Stack;
let ns: string;

before(async () => {
  stack = await startStack('ks-life');
  ns = stack.namespace;
});
after(() => stack?.stop());

const KS = { apiVersion: 'kustomize.mooring.dev/v1', kind: 'Kustomization' };

describe('Kustomization lifecycle', { concurrency: 4 }, () => {
  test('dependsOn waits for the dependency, then proceeds without being asked', async () => {
    const { name: source } = await gitSource(stack, {
      'infra/a.yaml': configMap('infra-cm', {}),
      'app/b.yaml': configMap('app-cm', {}),
    });
    const infra = uniqueName('infra');
    const app = uniqueName('app');
    await createKustomization(stack, app, {
      sourceRef: { kind: 'GitRepository', name: source },
      path: 'app',
      dependsOn: [{ name: infra }],
    });
    const waiting = await waitForKustomization(
      ns,
      app,
      'False',
      (k) => condition(k, 'Ready')?.reason === 'DependencyNotReady',
    );
    assert.match(condition(waiting, 'Ready')!.message, new RegExp(`dependency '${ns}/${infra}'`));
    assert.equal(
      await getObject('v1', 'ConfigMap', ns, 'app-cm'),
      undefined,
      'nothing applied before the dependency',
    );
    await createKustomization(stack, infra, {
      sourceRef: { kind: 'GitRepository', name: source },
      path: 'infra',
    });
    await waitForKustomization(ns, infra);
    await waitForKustomization(ns, app);
    assert.ok(await getObject('v1', 'ConfigMap', ns, 'app-cm'));
  });

  test('a dependency cycle is reported, not looped', async () => {
    const { name: source } = await gitSource(stack, { 'x/a.yaml': configMap('cyc', {}) });
    const a = uniqueName('cyc-a');
    const b = uniqueName('cyc-b');
    await createKustomization(stack, a, {
      sourceRef: { kind: 'GitRepository', name: source },
      path: 'x',
      dependsOn: [{ name: b }],
    });
    await createKustomization(stack, b, {
      sourceRef: { kind: 'GitRepository', name: source },
      path: 'x',
      dependsOn: [{ name: a }],
    });
    const stalled = await waitForKustomization(
      ns,
      a,
      'False',
      (k) => condition(k, 'Stalled')?.status === 'True',
    );
    assert.match(condition(stalled, 'Ready')!.message, /dependency cycle: .*→.*→/);
  });

  test('deletionPolicy Delete removes the objects; Orphan keeps them', async () => {
    const { client } = await testCluster();
    const { name: source } = await gitSource(stack, {
      'del/a.yaml': configMap('deleted-with-ks', {}),
      'orphan/a.yaml': configMap('orphaned', {}),
    });
    const del = uniqueName('del');
    const orphan = uniqueName('orphan');
    await createKustomization(stack, del, {
      sourceRef: { kind: 'GitRepository', name: source },
      path: 'del',
      prune: false,
      deletionPolicy: 'Delete',
    });
    await createKustomization(stack, orphan, {
      sourceRef: { kind: 'GitRepository', name: source },
      path: 'orphan',
      deletionPolicy: 'Orphan',
    });
    await waitForKustomization(ns, del);
    await waitForKustomization(ns, orphan);
    await client.delete({ ...KS, namespace: ns, name: del });
    await client.delete({ ...KS, namespace: ns, name: orphan });
    await eventually(
      'both gone',
      async () =>
        !(await client.getOrUndefined({ ...KS, namespace: ns, name: del })) &&
        !(await client.getOrUndefined({ ...KS, namespace: ns, name: orphan })),
    );
    assert.equal(await getObject('v1', 'ConfigMap', ns, 'deleted-with-ks'), undefined);
    assert.ok(await getObject('v1', 'ConfigMap', ns, 'orphaned'));
  });

  test('serviceAccountName impersonates: allowed writes work, a forbidden prune fails as PruneFailed', async () => {
    const { client } = await testCluster();
    const sa = uniqueName('deployer');
    await client.create({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: sa, namespace: ns } });
    await client.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: sa, namespace: ns },
      rules: [
        { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'create', 'patch', 'update'] },
      ],
    });
    await client.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: sa, namespace: ns },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: sa },
      subjects: [{ kind: 'ServiceAccount', name: sa, namespace: ns }],
    });
    const { repo, name: source } = await gitSource(stack, {
      'rbac/a.yaml': configMap('rbac-a', {}),
      'rbac/b.yaml': configMap('rbac-b', {}),
    });
    const name = uniqueName('rbac');
    await createKustomization(stack, name, {
      sourceRef: { kind: 'GitRepository', name: source },
      path: 'rbac',
      serviceAccountName: sa,
    });
    await waitForKustomization(ns, name);
    const cm = await getObject('v1', 'ConfigMap', ns, 'rbac-a');
    assert.ok(cm?.metadata.managedFields?.length, 'applied');
    await repo.commit({ 'rbac/b.yaml': null });
    const { mergePatch } = client;
    await mergePatch.call(
      client,
      { apiVersion: 'source.mooring.dev/v1', kind: 'GitRepository', namespace: ns, name: source },
      {
        metadata: { annotations: { 'reconcile.mooring.dev/requestedAt': `${Date.now()}` } },
      },
    );
    const failed = await waitForKustomization(
      ns,
      name,
      'False',
      (k) => condition(k, 'Ready')?.reason === 'PruneFailed',
    );
    assert.match(condition(failed, 'Ready')!.message, /forbidden|cannot delete/i);
    assert.ok(
      failed.status!.inventory!.entries.some((e) => e.id.includes('rbac-b')),
      'kept in the inventory to retry',
    );
    assert.ok(await getObject('v1', 'ConfigMap', ns, 'rbac-b'), 'not deleted');

    const denied = uniqueName('denied');
    const other = await gitSource(stack, {
      'd/s.yaml': 'apiVersion: v1\nkind: Secret\nmetadata:\n  name: not-allowed\nstringData:\n  a: b\n',
    });
    await createKustomization(stack, denied, {
      sourceRef: { kind: 'GitRepository', name: other.name },
      path: 'd',
      serviceAccountName: sa,
    });
    const forbidden = await waitForKustomization(
      ns,
      denied,
      'False',
      (k) => condition(k, 'Ready')?.reason === 'ReconciliationFailed',
    );
    assert.match(condition(forbidden, 'Ready')!.message, /forbidden/i);
    assert.equal(await getObject('v1', 'Secret', ns, 'not-allowed'), undefined);
  });

  test('postBuild substitutes from inline values and a ConfigMap; an undefined variable is named', async () => {
    const { client } = await testCluster();
    await client.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'cluster-vars', namespace: ns },
      data: { region: 'eu-1' },
    });
    const { name: source } = await gitSource(stack, {
      'sub/a.yaml': configMap('vars', { region: '${region}', env: '${env}', tier: '${tier:=gold}' }),
      'strict/a.yaml': configMap('strict', { x: '${not_defined}' }),
    });
    const ok = uniqueName('subst');
    await createKustomization(stack, ok, {
      sourceRef: { kind: 'GitRepository', name: source },
      path: 'sub',
      postBuild: {
        substitute: { env: 'prod' },
        substituteFrom: [{ kind: 'ConfigMap', name: 'cluster-vars' }],
      },
    });
    await waitForKustomization(ns, ok);
    const cm = (await getObject('v1', 'ConfigMap', ns, 'vars')) as unknown as {
      data: Record<string, string>;
    };
    assert.deepEqual(cm.data, { region: 'eu-1', env: 'prod', tier: 'gold' });

    const strict = uniqueName('strict');
    await createKustomization(stack, strict, {
      sourceRef: { kind: 'GitRepository', name: source },
      path: 'strict',
      postBuild: { substitute: { env: 'prod' } },
    });
    const failed = await waitForKustomization(
      ns,
      strict,
      'False',
      (k) => condition(k, 'Ready')?.reason === 'BuildFailed',
    );
    assert.match(condition(failed, 'Ready')!.message, /not_defined/);
  });

  test('health checks time out with the object named, and an invalid CEL expression stalls', async () => {
    const { name: source } = await gitSource(stack, {
      'h/d.yaml': `apiVersion: apps/v1
kind: Deployment
metadata:
  name: never-ready
spec:
  replicas: 1
  selector: {matchLabels: {app: never}}
  template:
    metadata: {labels: {app: never}}
    spec: {containers: [{name: c, image: busybox}]}
`,
    });
    const name = uniqueName('health');
    await createKustomization(stack, name, {
      sourceRef: { kind: 'GitRepository', name: source },
      path: 'h',
      interval: '1m',
      timeout: '30s',
      healthChecks: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'never-ready', namespace: ns }],
    });
    const failed = await waitForKustomization(
      ns,
      name,
      'False',
      (k) => condition(k, 'Ready')?.reason === 'HealthCheckFailed',
      60_000,
    );
    assert.match(condition(failed, 'Ready')!.message, /Deployment\/.*never-ready/);
    assert.equal(condition(failed, 'Healthy')?.status, 'False');

    const bad = uniqueName('badcel');
    await createKustomization(stack, bad, {
      sourceRef: { kind: 'GitRepository', name: source },
      path: 'h',
      healthCheckExprs: [{ apiVersion: 'apps/v1', kind: 'Deployment', current: 'self.status.(' }],
    });
    const stalled = await waitForKustomization(
      ns,
      bad,
      'False',
      (k) => condition(k, 'Stalled')?.status === 'True',
    );
    assert.equal(condition(stalled, 'Ready')!.reason, 'InvalidCELExpression');
  });
});

describe('Kustomization artifact integrity and termination', () => {
  test('an artifact whose bytes no longer match its digest is refused before anything is extracted', async () => {
    const { client } = await testCluster();
    const { name: source } = await gitSource(stack, { 't/cm.yaml': configMap('tampered-target', {}) });
    const repo = await eventually('the artifact', async () => {
      const r = await client.get<KubeObject & { status?: { artifact?: { path: string } } }>({
        apiVersion: 'source.mooring.dev/v1',
        kind: 'GitRepository',
        namespace: ns,
        name: source,
      });
      return r.status?.artifact;
    });
    // Someone with write access to the storage volume swaps the bytes behind the digest.
    const file = join(stack.storage, repo.path);
    const bytes = await readFile(file);
    bytes[bytes.length - 20] = (bytes[bytes.length - 20]! + 1) % 256;
    await writeFile(file, bytes);
    const name = uniqueName('tampered');
    await createKustomization(stack, name, { sourceRef: { kind: 'GitRepository', name: source }, path: 't' });
    const failed = await waitForKustomization(
      ns,
      name,
      'False',
      (k) =>
        condition(k, 'Ready')?.reason === 'ArtifactFailed' && /digest/i.test(condition(k, 'Ready')!.message),
    );
    assert.match(condition(failed, 'Ready')!.message, /sha256:/);
    assert.equal(await getObject('v1', 'ConfigMap', ns, 'tampered-target'), undefined);
  });

  test('deletionPolicy WaitForTermination deletes the objects and waits for them to go', async () => {
    const { client } = await testCluster();
    const { name: source } = await gitSource(stack, { 'w/cm.yaml': configMap('waited-for', {}) });
    const name = uniqueName('wait-term');
    await createKustomization(stack, name, {
      sourceRef: { kind: 'GitRepository', name: source },
      path: 'w',
      deletionPolicy: 'WaitForTermination',
    });
    await waitForKustomization(ns, name);
    await client.delete({ ...KS, namespace: ns, name });
    await eventually(
      'the Kustomization gone',
      async () => !(await client.getOrUndefined({ ...KS, namespace: ns, name })),
    );
    assert.equal(await getObject('v1', 'ConfigMap', ns, 'waited-for'), undefined);
  });
});

describe('Kustomization with kubeConfig: applying to another cluster', () => {
  test('objects go to the cluster the kubeconfig Secret names, and an exec plugin is refused', async (t) => {
    const { client } = await testCluster();
    // A second, real control plane: the "remote" cluster.
    const dir = await mkdtemp(join(tmpdir(), 'mooring-remote-'));
    const remote = await up(locationAt(dir), () => {});
    t.after(async () => {
      await down(locationAt(dir));
      await rm(dir, { recursive: true, force: true });
    });
    const remoteClient = await KubeClient.fromKubeconfig(remote.kubeconfig);
    t.after(() => remoteClient.close());
    const remoteNs = uniqueName('remote-target');
    await remoteClient.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: remoteNs } });
    await client.create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'remote-kubeconfig', namespace: ns },
      stringData: { value: await readFile(remote.kubeconfig, 'utf8') },
    });
    const { name: source } = await gitSource(stack, {
      'r/cm.yaml': configMap('over-there', { where: 'remote' }),
    });
    const name = uniqueName('remote');
    await createKustomization(stack, name, {
      sourceRef: { kind: 'GitRepository', name: source },
      path: 'r',
      targetNamespace: remoteNs,
      kubeConfig: { secretRef: { name: 'remote-kubeconfig' } },
    });
    await waitForKustomization(ns, name);
    assert.ok(
      await remoteClient.getOrUndefined({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        namespace: remoteNs,
        name: 'over-there',
      }),
    );
    assert.equal(
      await getObject('v1', 'ConfigMap', remoteNs, 'over-there'),
      undefined,
      'not on this cluster',
    );

    // A kubeconfig whose user runs a program is never used.
    await client.create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'exec-kubeconfig', namespace: ns },
      stringData: {
        value: `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]
users: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/sh, args: ['-c', 'touch /tmp/pwned']}}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`,
      },
    });
    const execName = uniqueName('exec');
    await createKustomization(stack, execName, {
      sourceRef: { kind: 'GitRepository', name: source },
      path: 'r',
      kubeConfig: { secretRef: { name: 'exec-kubeconfig' } },
    });
    const stalled = await waitForKustomization(
      ns,
      execName,
      'False',
      (k) => condition(k, 'Stalled')?.status === 'True',
    );
    assert.match(condition(stalled, 'Ready')!.message, /exec credential plugin/);
  });
});

describe('Kustomization with kubeConfig: credential files (the token-file class)', () => {
  test("a kubeconfig whose token-file names the operator's own token is refused, and nothing is sent", async (t) => {
    const { client } = await testCluster();
    // The tenant's "cluster": records every request, so a leaked bearer token would show up here.
    const seen: string[] = [];
    const attacker = createServer((req, res) => {
      seen.push(String(req.headers.authorization ?? ''));
      res.writeHead(500).end();
    });
    await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
    t.after(() => attacker.close());
    const port = (attacker.address() as AddressInfo).port;
    // Stands in for /var/run/secrets/kubernetes.io/serviceaccount/token inside the operator.
    const dir = await mkdtemp(join(tmpdir(), 'mooring-sa-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    const tokenPath = join(dir, 'token');
    await writeFile(tokenPath, 'operator-service-account-token-marker');
    await client.create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'token-file-kubeconfig', namespace: ns },
      stringData: {
        value: `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: 'http://127.0.0.1:${port}'}}]
users: [{name: u, user: {token-file: '${tokenPath}'}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`,
      },
    });
    const { name: source } = await gitSource(stack, { 'r/cm.yaml': configMap('never-sent', { a: 'b' }) });
    const name = uniqueName('token-file');
    await createKustomization(stack, name, {
      sourceRef: { kind: 'GitRepository', name: source },
      path: 'r',
      kubeConfig: { secretRef: { name: 'token-file-kubeconfig' } },
    });
    const stalled = await waitForKustomization(
      ns,
      name,
      'False',
      (k) => condition(k, 'Stalled')?.status === 'True',
    );
    assert.match(condition(stalled, 'Ready')!.message, /token file on the operator/);
    assert.doesNotMatch(JSON.stringify(stalled.status), /operator-service-account-token-marker/);
    assert.deepEqual(seen, [], 'no request reached the server the kubeconfig names');
  });
});

describe('Kustomization with --no-cross-namespace-refs', () => {
  let locked: Stack;
  before(async () => {
    locked = await startStack('ks-acl', ['--no-cross-namespace-refs']);
  });
  after(() => locked?.stop());

  test('a source in another namespace is AccessDenied, terminally', async () => {
    const { name: source } = await gitSource(stack, { 'a/cm.yaml': configMap('acl', {}) });
    const name = uniqueName('acl');
    await createKustomization(locked, name, {
      sourceRef: { kind: 'GitRepository', name: source, namespace: ns },
      path: 'a',
    });
    const denied = await waitForKustomization(locked.namespace, name, 'False');
    assert.equal(condition(denied, 'Ready')!.reason, 'AccessDenied');
    assert.equal(condition(denied, 'Stalled')?.status, 'True');
    assert.equal((await getKustomization(locked.namespace, name)).status?.inventory, undefined);
  });
});
