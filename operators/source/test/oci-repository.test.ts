// OCIRepository end to end: the source operator in this process pulling from Debian's real
// docker-registry on loopback, with artifacts pushed by @mooring/oci's own push.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ConditionType } from '@mooring/api';
import { packDirectory } from '@mooring/artifact';
import { RegistryClient } from '@mooring/oci';
import { TestRegistry, testCluster, uniqueName } from '@mooring/test/harness';
import {
  conditionOf,
  createSource,
  downloadArtifact,
  type RunningSource,
  startSourceOperator,
  waitForReady,
} from './source-fixture.ts';

const KIND = 'OCIRepository';
const CONFIG_TYPE = 'application/vnd.cncf.flux.config.v1+json';
const CONTENT_TYPE = 'application/vnd.cncf.flux.content.v1.tar+gzip';
let namespace: string;
let operator: RunningSource;
let registry: TestRegistry;

before(async () => {
  const { client } = await testCluster();
  namespace = uniqueName('source-oci');
  await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  registry = await TestRegistry.start();
  operator = await startSourceOperator(namespace);
});

after(async () => {
  await operator?.stop();
  await registry?.close();
  const { client } = await testCluster();
  await client.delete({ apiVersion: 'v1', kind: 'Namespace', name: namespace }).catch(() => {});
});

/** A tar.gz of the given files, packed the way Mooring packs artifacts. */
async function tarball(files: Record<string, string>): Promise<Buffer> {
  const dir = await mkdtemp(join(tmpdir(), 'oci-src-'));
  try {
    for (const [p, body] of Object.entries(files)) {
      await mkdir(dirname(join(dir, 'tree', p)), { recursive: true });
      await writeFile(join(dir, 'tree', p), body);
    }
    await packDirectory(join(dir, 'tree'), join(dir, 'out.tar.gz'));
    return await readFile(join(dir, 'out.tar.gz'));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function push(
  repository: string,
  tag: string,
  files: Record<string, string>,
  extra: { annotations?: Record<string, string>; layers?: { mediaType: string; data: Buffer }[] } = {},
): Promise<string> {
  const client = new RegistryClient({ insecure: true, timeoutMs: 10_000 });
  const { digest } = await client.push({ host: registry.host, repository }, tag, {
    config: { mediaType: CONFIG_TYPE, data: Buffer.from('{}') },
    layers: [...(extra.layers ?? []), { mediaType: CONTENT_TYPE, data: await tarball(files) }],
    annotations: extra.annotations,
  });
  return digest;
}

describe('OCIRepository', () => {
  test('pulls a tag into an artifact with the manifest annotations as metadata', async (t) => {
    const repo = uniqueName('manifests');
    const digest = await push(
      repo,
      'v1.0.0',
      { 'deploy/app.yaml': 'kind: ConfigMap\n' },
      {
        annotations: { 'org.opencontainers.image.revision': 'main@sha1:abc' },
      },
    );
    const name = uniqueName('tag');
    await createSource(KIND, namespace, name, {
      url: `oci://${registry.host}/${repo}`,
      interval: '10m',
      insecure: true,
      ref: { tag: 'v1.0.0' },
    });
    const ready = await waitForReady(KIND, namespace, name);
    const artifact = ready.status!.artifact!;
    assert.equal(artifact.revision, `v1.0.0@${digest}`);
    assert.equal(artifact.metadata?.['org.opencontainers.image.revision'], 'main@sha1:abc');
    const fetched = await downloadArtifact(artifact);
    t.after(() => fetched.cleanup());
    assert.equal(await readFile(join(fetched.dir, 'deploy/app.yaml'), 'utf8'), 'kind: ConfigMap\n');
  });

  test('semver picks the highest matching tag; digest pins a manifest', async () => {
    const repo = uniqueName('versions');
    await push(repo, '1.0.0', { 'v.yaml': '1' });
    const d12 = await push(repo, '1.2.0', { 'v.yaml': '1.2' });
    await push(repo, '2.0.0', { 'v.yaml': '2' });
    await push(repo, 'latest', { 'v.yaml': 'latest' });
    const semver = uniqueName('semver');
    await createSource(KIND, namespace, semver, {
      url: `oci://${registry.host}/${repo}`,
      interval: '10m',
      insecure: true,
      ref: { semver: '>=1.0.0 <2.0.0' },
    });
    const pinned = uniqueName('digest');
    await createSource(KIND, namespace, pinned, {
      url: `oci://${registry.host}/${repo}`,
      interval: '10m',
      insecure: true,
      ref: { digest: d12 },
    });
    assert.equal((await waitForReady(KIND, namespace, semver)).status!.artifact!.revision, `1.2.0@${d12}`);
    assert.equal((await waitForReady(KIND, namespace, pinned)).status!.artifact!.revision, d12);
  });

  test('layerSelector picks a layer by media type and copy stores it as-is', async () => {
    const repo = uniqueName('layers');
    const raw = await tarball({ 'chart.yaml': 'name: x' });
    await push(
      repo,
      'latest',
      { 'other.yaml': 'o' },
      { layers: [{ mediaType: 'application/x-custom+gzip', data: raw }] },
    );
    const name = uniqueName('copy');
    await createSource(KIND, namespace, name, {
      url: `oci://${registry.host}/${repo}`,
      interval: '10m',
      insecure: true,
      layerSelector: { mediaType: 'application/x-custom+gzip', operation: 'copy' },
    });
    const ready = await waitForReady(KIND, namespace, name);
    const stored = await readFile(join(operator.storageRoot, ready.status!.artifact!.path));
    assert.deepEqual(stored, raw, 'the layer is stored byte for byte');

    const missing = uniqueName('nolayer');
    await createSource(KIND, namespace, missing, {
      url: `oci://${registry.host}/${repo}`,
      interval: '10m',
      insecure: true,
      layerSelector: { mediaType: 'application/does-not-exist' },
    });
    const failed = await waitForReady(KIND, namespace, missing, 'False');
    assert.match(conditionOf(failed, 'Ready')!.message, /application\/does-not-exist/);
  });

  test('a blob whose bytes do not match its digest is refused and nothing is stored', async () => {
    const repo = uniqueName('tampered');
    await push(repo, 'latest', { 'a.yaml': 'a' });
    // A proxy in front of the real registry that flips one byte of every blob it serves.
    const proxy = http.createServer((req, res) => {
      const upstream = http.request(
        {
          host: '127.0.0.1',
          port: Number(registry.host.split(':')[1]),
          path: req.url,
          method: req.method,
          headers: req.headers,
        },
        (up) => {
          const chunks: Buffer[] = [];
          up.on('data', (c: Buffer) => chunks.push(c));
          up.on('end', () => {
            const body = Buffer.concat(chunks);
            if (req.url?.includes('/blobs/') && body.length > 20) body[body.length - 10]! ^= 0xff;
            res.writeHead(up.statusCode ?? 502, up.headers);
            res.end(body);
          });
        },
      );
      req.pipe(upstream);
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    const port = (proxy.address() as AddressInfo).port;
    try {
      const name = uniqueName('tampered');
      await createSource(KIND, namespace, name, {
        url: `oci://127.0.0.1:${port}/${repo}`,
        interval: '10m',
        insecure: true,
      });
      const failed = await waitForReady(KIND, namespace, name, 'False');
      assert.match(conditionOf(failed, 'Ready')!.message, /digest/i);
      assert.equal(failed.status?.artifact, undefined);
      assert.equal(conditionOf(failed, ConditionType.FetchFailed)?.status, 'True');
    } finally {
      await new Promise((r) => proxy.close(r));
    }
  });

  test('a registry answering garbage gets a clear error, not a crash', async () => {
    const garbage = http.createServer((_req, res) => {
      res
        .writeHead(200, { 'Content-Type': 'application/vnd.oci.image.manifest.v1+json' })
        .end('{"schemaVersion": 2, "layers": "nope"');
    });
    await new Promise<void>((r) => garbage.listen(0, '127.0.0.1', r));
    const port = (garbage.address() as AddressInfo).port;
    try {
      const name = uniqueName('garbage');
      await createSource(KIND, namespace, name, {
        url: `oci://127.0.0.1:${port}/x/y`,
        interval: '10m',
        insecure: true,
      });
      const failed = await waitForReady(KIND, namespace, name, 'False');
      assert.equal(conditionOf(failed, ConditionType.FetchFailed)?.reason, 'OCIArtifactPullFailed');
    } finally {
      await new Promise((r) => garbage.close(r));
    }
  });
});

describe('OCIRepository with registry credentials', () => {
  let secured: TestRegistry;
  before(async () => {
    secured = await TestRegistry.start({ htpasswd: { username: 'robot', password: 'pw-Sekr1t-canary' } });
  });
  after(async () => secured?.close());

  test('basic auth from a dockerconfigjson Secret works, and a wrong password never shows up in status', async () => {
    const { client } = await testCluster();
    const repo = uniqueName('private');
    const pusher = new RegistryClient({
      insecure: true,
      timeoutMs: 10_000,
      credentials: { username: 'robot', password: 'pw-Sekr1t-canary' },
    });
    await pusher.push({ host: secured.host, repository: repo }, 'latest', {
      config: { mediaType: CONFIG_TYPE, data: Buffer.from('{}') },
      layers: [{ mediaType: CONTENT_TYPE, data: await tarball({ 'p.yaml': 'private' }) }],
    });
    const secret = (name: string, password: string) => ({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name, namespace },
      type: 'kubernetes.io/dockerconfigjson',
      stringData: {
        '.dockerconfigjson': JSON.stringify({
          auths: { [secured.host]: { auth: Buffer.from(`robot:${password}`).toString('base64') } },
        }),
      },
    });
    await client.create(secret('good-creds', 'pw-Sekr1t-canary'));
    await client.create(secret('bad-creds', 'wrong-Pa55-canary'));
    const good = uniqueName('good');
    await createSource(KIND, namespace, good, {
      url: `oci://${secured.host}/${repo}`,
      interval: '10m',
      insecure: true,
      secretRef: { name: 'good-creds' },
    });
    const bad = uniqueName('bad');
    await createSource(KIND, namespace, bad, {
      url: `oci://${secured.host}/${repo}`,
      interval: '10m',
      insecure: true,
      secretRef: { name: 'bad-creds' },
    });
    await waitForReady(KIND, namespace, good);
    const failed = await waitForReady(KIND, namespace, bad, 'False');
    assert.equal(conditionOf(failed, ConditionType.FetchFailed)?.reason, 'AuthenticationFailed');
    assert.doesNotMatch(JSON.stringify(failed.status), /wrong-Pa55-canary|pw-Sekr1t-canary/);
  });
});
