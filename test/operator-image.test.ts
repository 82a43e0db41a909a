import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import { type AddressInfo, createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { mooring } from '@mooring/cli/test/run-cli';
import type { KubeObject } from '@mooring/runtime';
import { DEFAULT_OUT_DIR } from '../hack/lib/image/build.ts';
import { pullImage, pushLayout } from '../hack/lib/image/registry.ts';
import { eventually, GitServer, privateControlPlane, TestRegistry } from './harness/index.ts';
import { type RunningContainer, runContainer, runcAvailable, unpackLayers } from './harness/oci-runtime.ts';

// The operator image for real: the image `hack/image build` made is pushed to a local registry,
// `mooring install --registry` names it in every Deployment, and each Deployment's image is pulled
// from there and run with runc as kubelet's runtime would run the pod: the image's config (user,
// environment, working directory) under the Deployment's command and args, a read-only root,
// emptyDirs as tmpfs, uid 65532, no capabilities, and no credentials but the service-account token
// its RBAC grants. Four operators become ready and do their work end to end.

const NS = 'mooring-system';
const OPERATORS = ['source', 'kustomize', 'notification', 'image-automation'] as const;

interface Container {
  image: string;
  command: string[];
  args: string[];
  env?: { name: string; valueFrom?: { fieldRef?: { fieldPath: string } } }[];
  volumeMounts?: { mountPath: string }[];
}
interface PodTemplate {
  serviceAccountName: string;
  securityContext: { runAsUser: number; runAsGroup: number };
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
/** The parts of the image config a runtime reads. */
interface ImageConfig {
  config: { User: string; Env: string[]; WorkingDir: string; Entrypoint: string[]; Cmd: string[] };
}

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

const IMAGE_DIR = DEFAULT_OUT_DIR;

test('mooring install --registry names the built image, and each operator runs from it under runc: ready, fetching, applying, alerting', async (t) => {
  // A skipped test would prove nothing about the image: without runc the test fails with the reason.
  assert.ok(
    runcAvailable(),
    'running the image needs root and runc (Debian package runc); .ci/run installs it',
  );
  const built = JSON.parse(readFileSync(join(IMAGE_DIR, 'image.json'), 'utf8').toString()) as {
    refName: string;
    digest: string;
  };
  assert.ok(
    existsSync(join(IMAGE_DIR, 'oci/index.json')),
    'no image: run hack/image build (npm test builds it)',
  );
  const version = built.refName.slice(built.refName.lastIndexOf(':') + 1);

  const registry = await TestRegistry.start();
  t.after(() => registry.close());
  const pushed = await pushLayout(join(IMAGE_DIR, 'oci'), `${registry.host}/mooring-dev`, version, {
    insecure: true,
  });
  assert.equal(pushed.digest, built.digest, 'the registry stores the digest that was built');

  const plane = await privateControlPlane(t);
  const { client, dir } = plane;
  const installed = await mooring(
    ['install', '--registry', `${registry.host}/mooring-dev`, '--version', version],
    {
      env: { KUBECONFIG: plane.kubeconfig },
    },
  );
  assert.equal(installed.code, 0, installed.stderr);

  const work = await mkdtemp(join(tmpdir(), 'mooring-image-run-'));
  t.after(() => rm(work, { recursive: true, force: true }));
  // Pulled and unpacked once per distinct image the Deployments name (they all name one).
  const images = new Map<string, { rootfs: string; config: ImageConfig }>();
  async function imageFor(name: string): Promise<{ rootfs: string; config: ImageConfig }> {
    const found = images.get(name);
    if (found) return found;
    const pulled = await pullImage(name, join(work, `pull-${images.size}`), { insecure: true });
    assert.equal(pulled.digest, built.digest, `${name} is the image that was built`);
    const rootfs = join(work, `rootfs-${images.size}`);
    unpackLayers(pulled.layerFiles, rootfs);
    const entry = { rootfs, config: JSON.parse(readFileSync(pulled.configFile, 'utf8')) as ImageConfig };
    images.set(name, entry);
    return entry;
  }

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
  const logs = await mkdtemp(join(tmpdir(), 'mooring-image-logs-'));
  t.after(() => rm(logs, { recursive: true, force: true }));
  const containers: RunningContainer[] = [];
  t.after(async () => {
    await Promise.all(containers.map((c) => c.stop()));
  });
  const logOf = (name: string): string => readFileSync(join(logs, `${name}.log`), 'utf8').slice(-3000);

  for (const name of OPERATORS) {
    const dep = await client.get({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: NS, name });
    const pod = (dep.spec as { template: { spec: PodTemplate } }).template.spec;
    const container = pod.containers[0]!;
    assert.equal(container.image, `${registry.host}/mooring-dev/mooring:${version}`);
    const image = await imageFor(container.image);
    // The image runs as the user the Deployment asks for, so nothing depends on runAsUser alone.
    assert.equal(
      image.config.config.User,
      `${pod.securityContext.runAsUser}:${pod.securityContext.runAsGroup}`,
    );
    // As kubelet builds it: the image's environment, then the container's, then the service host.
    const env: Record<string, string> = Object.fromEntries(
      image.config.config.Env.map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]),
    );
    env.KUBERNETES_SERVICE_HOST = '127.0.0.1';
    env.KUBERNETES_SERVICE_PORT = apiPort;
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
    containers.push(
      runContainer(
        {
          rootfs: image.rootfs,
          // `command` replaces the image's Entrypoint and `args` its Cmd, as in a pod.
          args: [
            ...container.command,
            ...localArgs(container.args, env, ports[name], ports.notification.events),
          ],
          env,
          cwd: image.config.config.WorkingDir,
          uid: pod.securityContext.runAsUser,
          gid: pod.securityContext.runAsGroup,
          emptyDirs: (container.volumeMounts ?? []).map((m) => m.mountPath),
          serviceAccount: { token: token.status.token, caCrt, namespace: NS },
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
  // None of them crashed.
  for (const [i, name] of OPERATORS.entries())
    assert.equal(containers[i]!.process.exitCode, null, `${name}:\n${logOf(name)}`);
});
