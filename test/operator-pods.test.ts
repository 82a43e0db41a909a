import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import { type AddressInfo, createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { mooring } from '@mooring/cli/test/run-cli';
import type { KubeObject } from '@mooring/runtime';
import { repoRoot } from '../hack/lib/control-plane.ts';
import { eventually, GitServer, privateControlPlane } from './harness/index.ts';
import { podSandboxAvailable, startInPodSandbox } from './harness/pod-sandbox.ts';

// No container engine runs on the machines this suite runs on, so the operator image cannot be
// built here. What the image and the Deployments promise is checked instead by running each
// Deployment's own command and arguments the way a runtime would run the pod: a read-only root
// holding only the "image" (/usr, /etc, this checkout at /app), emptyDirs for /tmp and /data, uid 65532,
// no capabilities, no kubeconfig but the service-account token its RBAC grants, nothing else.

const NS = 'mooring-system';
const OPERATORS = ['source', 'kustomize', 'notification', 'image-automation'] as const;

interface Container {
  command: string[];
  args: string[];
  env?: { name: string; valueFrom?: { fieldRef?: { fieldPath: string } } }[];
  volumeMounts?: { mountPath: string }[];
}
interface PodTemplate {
  serviceAccountName: string;
  securityContext: { runAsUser: number };
  containers: Container[];
}

async function freePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

/** Each pod's listeners on loopback ports of their own, since all four share the host network. */
interface Ports {
  health: number;
  metrics: number;
  storage: number;
  events: number;
  receiver: number;
}

/** The Deployment's args with `$(VAR)` expanded as kubelet does and in-cluster addresses moved to loopback. */
function localArgs(args: string[], env: Record<string, string>, own: Ports, eventsPort: number): string[] {
  const expanded = args.map((a) => a.replace(/\$\(([A-Z_]+)\)/g, (_m, v: string) => env[v] ?? ''));
  const rewrite: Record<string, string> = {
    'metrics-addr': `127.0.0.1:${own.metrics}`,
    'health-addr': `127.0.0.1:${own.health}`,
    'storage-addr': `127.0.0.1:${own.storage}`,
    'storage-adv-addr': `localhost:${own.storage}`,
    'events-listen-addr': `127.0.0.1:${own.events}`,
    'receiver-addr': `127.0.0.1:${own.receiver}`,
    'events-addr': `http://127.0.0.1:${eventsPort}/`,
  };
  return expanded.map((a) => {
    const m = /^--([a-z-]+)=/.exec(a);
    return m && rewrite[m[1]!] !== undefined ? `--${m[1]}=${rewrite[m[1]!]}` : a;
  });
}

test('each operator runs from its Deployment as a hardened pod would: read-only root, non-root, only its service account', async (t) => {
  if (!podSandboxAvailable()) {
    // CI runs as root and must prove this; only a developer's non-root run may go without it.
    assert.ok(!process.env.CI, 'CI must run the pod sandbox: it needs root with unshare, chroot and setpriv');
    t.skip('needs root with unshare, chroot and setpriv to build the pod sandbox');
    return;
  }
  const plane = await privateControlPlane(t);
  const { client, dir } = plane;
  const installed = await mooring(['install'], { env: { KUBECONFIG: plane.kubeconfig } });
  assert.equal(installed.code, 0, installed.stderr);

  const caCrt = readFileSync(join(dir, 'pki/ca.crt'), 'utf8');
  const apiPort = new URL(plane.server).port;
  const ports = Object.fromEntries(
    await Promise.all(
      OPERATORS.map(async (name) => [
        name,
        {
          health: await freePort(),
          metrics: await freePort(),
          storage: await freePort(),
          events: await freePort(),
          receiver: await freePort(),
        },
      ]),
    ),
  ) as Record<(typeof OPERATORS)[number], Ports>;
  const logs = await mkdtemp(join(tmpdir(), 'mooring-pods-logs-'));
  t.after(() => rm(logs, { recursive: true, force: true }));
  const pods: ChildProcess[] = [];
  t.after(async () => {
    for (const p of pods) p.kill('SIGTERM');
    await Promise.all(pods.map((p) => (p.exitCode === null ? new Promise((r) => p.once('exit', r)) : 0)));
  });
  const logOf = (name: string): string => readFileSync(join(logs, `${name}.log`), 'utf8').slice(-3000);

  for (const name of OPERATORS) {
    const dep = await client.get({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: NS, name });
    const pod = (dep.spec as { template: { spec: PodTemplate } }).template.spec;
    const container = pod.containers[0]!;
    const env: Record<string, string> = {
      HOME: '/',
      PATH: '/usr/local/bin:/usr/bin:/bin',
      KUBERNETES_SERVICE_HOST: '127.0.0.1',
      KUBERNETES_SERVICE_PORT: apiPort,
    };
    for (const e of container.env ?? [])
      if (e.valueFrom?.fieldRef?.fieldPath === 'metadata.namespace') env[e.name] = NS;
    const token = await client.request<{ status: { token: string } }>({
      method: 'POST',
      path: `/api/v1/namespaces/${NS}/serviceaccounts/${pod.serviceAccountName}/token`,
      body: {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenRequest',
        spec: { expirationSeconds: 3600 },
      },
    });
    pods.push(
      startInPodSandbox(
        {
          // The checkout sits where the image puts it (WORKDIR /app in config/Dockerfile).
          workdir: '/app',
          command: [
            ...container.command,
            ...localArgs(container.args, env, ports[name], ports.notification.events),
          ],
          env,
          serviceAccount: { token: token.status.token, caCrt, namespace: NS },
          emptyDirs: (container.volumeMounts ?? []).map((m) => m.mountPath),
          readOnly: { '/usr': '/usr', '/etc': '/etc', '/app': repoRoot },
          uid: pod.securityContext.runAsUser,
        },
        join(logs, `${name}.log`),
      ),
    );
  }
  for (const name of OPERATORS)
    await eventually(
      `${name} to serve /readyz`,
      async () => {
        const res = await fetch(`http://127.0.0.1:${ports[name].health}/readyz`).catch(() => undefined);
        assert.equal(res?.status, 200, `${name} is not ready:\n${logOf(name)}`);
        return true;
      },
      60_000,
    );

  // The work each pod exists for, through its own RBAC: fetch, apply, and an alert out.
  const alerts: string[] = [];
  const sink = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => {
      body += c.toString();
    });
    req.on('end', () => {
      alerts.push(body);
      res.end();
    });
  });
  await new Promise<void>((r) => sink.listen(0, '127.0.0.1', r));
  t.after(() => new Promise((r) => sink.close(r)));
  const git = await GitServer.start();
  t.after(() => git.close());
  const repo = await git.createRepo('apps');
  const commit = await repo.commit({
    'deploy/model.yaml':
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: model\n  namespace: team\ndata:\n  version: v3\n',
  });
  const objects: KubeObject[] = [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team' } },
    {
      apiVersion: 'notification.mooring.dev/v1',
      kind: 'Provider',
      metadata: { name: 'sink', namespace: NS },
      spec: { type: 'generic', address: `http://127.0.0.1:${(sink.address() as AddressInfo).port}/` },
    },
    {
      apiVersion: 'notification.mooring.dev/v1',
      kind: 'Alert',
      metadata: { name: 'applied', namespace: NS },
      spec: {
        providerRef: { name: 'sink' },
        eventSources: [{ kind: 'Kustomization', name: '*' }],
        inclusionList: ['^Applied revision'],
      },
    },
    {
      apiVersion: 'source.mooring.dev/v1',
      kind: 'GitRepository',
      metadata: { name: 'apps', namespace: NS },
      spec: { url: repo.url, interval: '1m', ref: { branch: 'main' } },
    },
    {
      apiVersion: 'kustomize.mooring.dev/v1',
      kind: 'Kustomization',
      metadata: { name: 'apps', namespace: NS },
      spec: {
        interval: '10m',
        path: './deploy',
        prune: true,
        sourceRef: { kind: 'GitRepository', name: 'apps' },
      },
    },
  ];
  for (const o of objects) await client.create(o);
  await eventually(
    'the ConfigMap applied by the kustomize pod',
    async () => {
      const model = await client.getOrUndefined({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        namespace: 'team',
        name: 'model',
      });
      assert.deepEqual(
        model?.data,
        { version: 'v3' },
        `source:\n${logOf('source')}\nkustomize:\n${logOf('kustomize')}`,
      );
      return true;
    },
    60_000,
  );
  await eventually(
    'the "Applied revision" alert from the notification pod',
    async () => {
      assert.ok(
        alerts.some((a) => a.includes(`main@sha1:${commit}`)),
        `no alert yet:\n${logOf('notification')}`,
      );
      return true;
    },
    30_000,
  );
  // Nothing any pod wrote landed outside its emptyDirs, and none of them crashed.
  for (const [i, name] of OPERATORS.entries())
    assert.equal(pods[i]!.exitCode, null, `${name}:\n${logOf(name)}`);
});
