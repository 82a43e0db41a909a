// The source operator as a real process, both alone and inside the all-in-one entry: it serves
// artifacts, reconciles, and exits 0 on SIGTERM.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { GitServer, testCluster, uniqueName } from '@mooring/test/harness';
import { downloadArtifact, waitForReady } from './source-fixture.ts';

const repoRoot = join(import.meta.dirname, '../../..');
let server: GitServer;
let namespace: string;

before(async () => {
  const { client } = await testCluster();
  namespace = uniqueName('source-process');
  await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  server = await GitServer.start();
});

after(async () => {
  await server?.close();
  const { client } = await testCluster();
  await client.delete({ apiVersion: 'v1', kind: 'Namespace', name: namespace }).catch(() => {});
});

const entries: [string, string[]][] = [
  ['operators/source/src/main.ts', []],
  ['operators/all-in-one/src/main.ts', ['--only', 'source']],
];

for (const [entry, args] of entries) {
  test(`${entry} reconciles a GitRepository and exits 0 on SIGTERM`, async (t) => {
    const { kubeconfig } = await testCluster();
    const storage = await mkdtemp(join(tmpdir(), 'mooring-storage-'));
    t.after(() => rm(storage, { recursive: true, force: true }));
    const label = uniqueName('shard');
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        entry,
        ...args,
        '--kubeconfig',
        kubeconfig,
        '--watch-namespace',
        namespace,
        '--watch-label-selector',
        `shard=${label}`,
        '--metrics-addr',
        '127.0.0.1:0',
        '--health-addr',
        '127.0.0.1:0',
        '--storage-path',
        storage,
        '--storage-addr',
        '127.0.0.1:0',
      ],
      { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d));
    child.stderr.on('data', (d: Buffer) => (output += d));
    t.after(() => child.kill('SIGKILL'));

    const repo = await server.createRepo(uniqueName('proc'));
    const commit = await repo.commit({ 'app.yaml': 'kind: ConfigMap\n' });
    const name = uniqueName('proc');
    const { client } = await testCluster();
    await client.create({
      apiVersion: 'source.mooring.dev/v1',
      kind: 'GitRepository',
      metadata: { name, namespace, labels: { shard: label } },
      spec: { url: repo.url, interval: '10m', ref: { branch: 'main' } },
    });
    const ready = await waitForReady('GitRepository', namespace, name).catch((err: Error) => {
      throw new Error(`${err.message}\noperator output:\n${output}`);
    });
    assert.equal(ready.status!.artifact!.revision, `main@sha1:${commit}`);
    // The advertised URL points at the port the process actually bound.
    const fetched = await downloadArtifact(ready.status!.artifact!);
    await fetched.cleanup();
    assert.match(output, /artifact server listening/);

    child.kill('SIGTERM');
    const [code] = await once(child, 'exit');
    assert.equal(code, 0, output);
  });
}
