// GitRepository end to end: the source operator in this process, a real `git http-backend` on
// loopback, the real API server; artifacts are downloaded over HTTP and checked as a consumer would.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ConditionType } from '@mooring/api';
import { GitServer, testCluster, uniqueName } from '@mooring/test/harness';
import {
  conditionOf,
  createSource,
  downloadArtifact,
  getSource,
  type RunningSource,
  requestReconcile,
  sha256,
  startSourceOperator,
  waitForReady,
} from './source-fixture.ts';

const KIND = 'GitRepository';
let namespace: string;
let operator: RunningSource;
let server: GitServer;

before(async () => {
  const { client } = await testCluster();
  namespace = uniqueName('source-git');
  await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  server = await GitServer.start();
  operator = await startSourceOperator(namespace, ['--artifact-retention-records', '2']);
});

after(async () => {
  await operator?.stop();
  await server?.close();
  const { client } = await testCluster();
  await client.delete({ apiVersion: 'v1', kind: 'Namespace', name: namespace }).catch(() => {});
});

async function readTree(dir: string, rel = ''): Promise<string[]> {
  const out: string[] = [];
  for (const e of readdirSync(join(dir, rel), { withFileTypes: true })) {
    const p = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...(await readTree(dir, p)));
    else out.push(p);
  }
  return out.sort();
}

describe('GitRepository', { concurrency: 4 }, () => {
  test('packs the branch head, filtered by the default exclusions and .sourceignore', async (t) => {
    const repo = await server.createRepo(uniqueName('app'));
    const commit = await repo.commit({
      'deploy/app.yaml': 'kind: ConfigMap\n',
      'deploy/.sourceignore': 'scratch/\n',
      'deploy/scratch/tmp.yaml': 'x',
      '.github/workflows/ci.yaml': 'on: push',
      'logo.png': Buffer.from([0x89, 0x50]),
      'README.md': '# app',
    });
    const name = uniqueName('branch');
    await createSource(KIND, namespace, name, { url: repo.url, interval: '10m', ref: { branch: 'main' } });
    const ready = await waitForReady(KIND, namespace, name);
    const artifact = ready.status!.artifact!;
    assert.equal(artifact.revision, `main@sha1:${commit}`);
    assert.match(artifact.digest ?? '', /^sha256:[0-9a-f]{64}$/);
    assert.equal(artifact.path, `gitrepository/${namespace}/${name}/${artifact.digest!.slice(7)}.tar.gz`);
    assert.equal(conditionOf(ready, ConditionType.ArtifactInStorage)?.status, 'True');
    assert.match(
      conditionOf(ready, 'Ready')!.message,
      new RegExp(`stored artifact for revision 'main@sha1:${commit}'`),
    );

    const fetched = await downloadArtifact(artifact);
    t.after(() => fetched.cleanup());
    assert.deepEqual(await readTree(fetched.dir), ['README.md', 'deploy/.sourceignore', 'deploy/app.yaml']);
    const stored = readFileSync(join(operator.storageRoot, artifact.path));
    assert.equal(`sha256:${sha256(stored)}`, artifact.digest);
    assert.equal(artifact.size, stored.length);
  });

  test('reconciles with nothing new ask the remote and write nothing', async (t) => {
    // A server of its own, so the other tests running alongside do not add to its request count.
    const own = await GitServer.start();
    t.after(() => own.close());
    const repo = await own.createRepo(uniqueName('noop'));
    await repo.commit({ 'a.yaml': 'a: 1\n' });
    const name = uniqueName('noop');
    await createSource(KIND, namespace, name, { url: repo.url, interval: '1s' });
    // Flux's default branch is master.
    await repo.commit({ 'a.yaml': 'a: 1\n' }, 'on master', 'master');
    const ready = await waitForReady(KIND, namespace, name);
    const files = readdirSync(join(operator.storageRoot, 'gitrepository', namespace, name));
    const requestsBefore = own.requests;
    // Wait for the remote to be asked again (a few 1-second intervals, each a ref listing of one or
    // two HTTP requests), however long a loaded machine takes, rather than for a fixed time.
    const { eventually } = await import('@mooring/test/harness');
    await eventually('later reconciles ask the remote', async () => own.requests - requestsBefore >= 4);
    const later = await getSource(KIND, namespace, name);
    assert.equal(later.metadata.resourceVersion, ready.metadata.resourceVersion, 'no status write');
    assert.deepEqual(readdirSync(join(operator.storageRoot, 'gitrepository', namespace, name)), files);
  });

  test('a new commit produces a new artifact; old ones are collected beyond the retention count', async () => {
    const repo = await server.createRepo(uniqueName('gc'));
    await repo.commit({ 'v.yaml': 'v: 1\n' });
    const name = uniqueName('gc');
    await createSource(KIND, namespace, name, { url: repo.url, interval: '10m', ref: { branch: 'main' } });
    let last = await waitForReady(KIND, namespace, name);
    for (const v of [2, 3, 4]) {
      const commit = await repo.commit({ 'v.yaml': `v: ${v}\n` });
      await requestReconcile(KIND, namespace, name);
      last = await waitForReady(
        KIND,
        namespace,
        name,
        'True',
        (o) => o.status?.artifact?.revision === `main@sha1:${commit}`,
      );
    }
    const dir = join(operator.storageRoot, 'gitrepository', namespace, name);
    const files = readdirSync(dir).filter((f) => f.endsWith('.tar.gz'));
    assert.equal(files.length, 2, `kept ${files.join(', ')}`);
    assert.ok(files.includes(last.status!.artifact!.path.split('/').pop()!), 'the current artifact is kept');
  });

  test('tags, semver ranges, full ref names and commits resolve as Flux does', async () => {
    const repo = await server.createRepo(uniqueName('refs'));
    const c1 = await repo.commit({ 'v.yaml': 'v: 1\n' });
    await repo.tag('v1.0.0');
    const c2 = await repo.commit({ 'v.yaml': 'v: 2\n' });
    await repo.tag('v1.2.0');
    await repo.tag('not-semver');
    const c3 = await repo.commit({ 'v.yaml': 'v: 3\n' });
    await repo.tag('v2.0.0');
    const pr = await repo.commit({ 'v.yaml': 'pr\n' }, 'pr', 'feature');
    await repo.pushRef('refs/pull/7/head', pr);
    const cases: [Record<string, string>, string][] = [
      [{ tag: 'v1.0.0' }, `v1.0.0@sha1:${c1}`],
      [{ semver: '>=1.0.0 <2.0.0' }, `v1.2.0@sha1:${c2}`],
      [{ semver: '*' }, `v2.0.0@sha1:${c3}`],
      [{ commit: c1 }, `sha1:${c1}`],
      [{ branch: 'main', commit: c2 }, `main@sha1:${c2}`],
      [{ name: 'refs/pull/7/head' }, `refs/pull/7/head@sha1:${pr}`],
      [{ branch: 'main', tag: 'v1.0.0' }, `v1.0.0@sha1:${c1}`],
    ];
    await Promise.all(
      cases.map(async ([ref, revision], i) => {
        const name = uniqueName(`ref-${i}`);
        await createSource(KIND, namespace, name, { url: repo.url, interval: '10m', ref });
        const ready = await waitForReady(KIND, namespace, name);
        assert.equal(ready.status!.artifact!.revision, revision, JSON.stringify(ref));
      }),
    );
  });

  test('a ref that does not exist fails with a clear message and keeps the last good artifact', async () => {
    const repo = await server.createRepo(uniqueName('missing'));
    await repo.commit({ 'a.yaml': 'a\n' });
    const name = uniqueName('missing');
    await createSource(KIND, namespace, name, { url: repo.url, interval: '10m', ref: { branch: 'main' } });
    const good = await waitForReady(KIND, namespace, name);
    const { client } = await testCluster();
    await client.mergePatch(
      { apiVersion: good.apiVersion, kind: KIND, namespace, name },
      { spec: { ref: { branch: 'no-such-branch' } } },
    );
    const failed = await waitForReady(KIND, namespace, name, 'False');
    assert.match(conditionOf(failed, 'Ready')!.message, /no-such-branch/);
    assert.equal(conditionOf(failed, ConditionType.FetchFailed)?.status, 'True');
    assert.deepEqual(
      failed.status!.artifact,
      good.status!.artifact,
      'the last good artifact stays in status',
    );
    assert.ok(existsSync(join(operator.storageRoot, good.status!.artifact!.path)), 'and in storage');
  });

  test('an unreachable host fails without crashing the operator', async () => {
    const name = uniqueName('unreachable');
    await createSource(KIND, namespace, name, {
      url: 'http://127.0.0.1:9/nothing.git',
      interval: '10m',
      timeout: '5s',
    });
    const failed = await waitForReady(KIND, namespace, name, 'False');
    assert.equal(conditionOf(failed, ConditionType.FetchFailed)?.reason, 'GitOperationFailed');
    assert.match(conditionOf(failed, 'Ready')!.message, /127\.0\.0\.1:9/);
  });

  test('symlinks are dropped from the artifact, wherever they point', async (t) => {
    const repo = await server.createRepo(uniqueName('links'));
    await repo.commitSymlinks(
      { 'escape.yaml': '/etc/passwd', 'up.yaml': '../../secret', 'inside.yaml': 'real.yaml' },
      {
        'real.yaml': 'kind: ConfigMap\n',
      },
    );
    const name = uniqueName('links');
    await createSource(KIND, namespace, name, { url: repo.url, interval: '10m', ref: { branch: 'main' } });
    const ready = await waitForReady(KIND, namespace, name);
    const fetched = await downloadArtifact(ready.status!.artifact!);
    t.after(() => fetched.cleanup());
    assert.deepEqual(await readTree(fetched.dir), ['real.yaml']);
  });

  test('a file over the size limit is refused with its name, and nothing is stored', async () => {
    const repo = await server.createRepo(uniqueName('big'));
    await repo.commit({ 'big.bin.yaml': Buffer.alloc(200 * 1024 * 1024) });
    const name = uniqueName('big');
    await createSource(KIND, namespace, name, {
      url: repo.url,
      interval: '10m',
      ref: { branch: 'main' },
      timeout: '120s',
    });
    const failed = await waitForReady(KIND, namespace, name, 'False', () => true, 60_000);
    assert.match(conditionOf(failed, 'Ready')!.message, /big\.bin\.yaml/);
    assert.equal(failed.status?.artifact, undefined);
    assert.equal(conditionOf(failed, 'Stalled')?.status, 'True');
  });

  test('sparseCheckout keeps only the named folders', async (t) => {
    const repo = await server.createRepo(uniqueName('sparse'));
    await repo.commit({ 'apps/a.yaml': 'a', 'infra/b.yaml': 'b', 'other/c.yaml': 'c', 'top.yaml': 't' });
    const name = uniqueName('sparse');
    await createSource(KIND, namespace, name, {
      url: repo.url,
      interval: '10m',
      ref: { branch: 'main' },
      sparseCheckout: ['apps', 'infra'],
    });
    const ready = await waitForReady(KIND, namespace, name);
    assert.deepEqual(ready.status!.observedSparseCheckout, ['apps', 'infra']);
    const fetched = await downloadArtifact(ready.status!.artifact!);
    t.after(() => fetched.cleanup());
    const files = await readTree(fetched.dir);
    assert.ok(files.includes('apps/a.yaml') && files.includes('infra/b.yaml'), files.join());
    assert.ok(!files.includes('other/c.yaml'), files.join());
  });

  test('include copies another repository artifact in at toPath', async (t) => {
    const lib = await server.createRepo(uniqueName('lib'));
    await lib.commit({ 'shared/base.yaml': 'base', 'shared/more/x.yaml': 'x', 'unrelated.yaml': 'u' });
    const app = await server.createRepo(uniqueName('app'));
    await app.commit({ 'app.yaml': 'app' });
    const libName = uniqueName('lib');
    await createSource(KIND, namespace, libName, { url: lib.url, interval: '10m', ref: { branch: 'main' } });
    const name = uniqueName('with-include');
    await createSource(KIND, namespace, name, {
      url: app.url,
      interval: '10m',
      ref: { branch: 'main' },
      include: [{ repository: { name: libName }, fromPath: 'shared', toPath: 'vendor/lib' }],
    });
    const ready = await waitForReady(KIND, namespace, name);
    assert.equal((ready.status!.includedArtifacts as unknown[] | undefined)?.length, 1);
    const fetched = await downloadArtifact(ready.status!.artifact!);
    t.after(() => fetched.cleanup());
    assert.deepEqual(await readTree(fetched.dir), [
      'app.yaml',
      'vendor/lib/base.yaml',
      'vendor/lib/more/x.yaml',
    ]);

    // A new artifact of the included repository rebuilds the including one without being asked.
    await lib.commit({ 'shared/added.yaml': 'new' });
    await requestReconcile(KIND, namespace, libName);
    const rebuilt = await waitForReady(
      KIND,
      namespace,
      name,
      'True',
      (o) => o.status?.artifact?.digest !== ready.status!.artifact!.digest,
    );
    const again = await downloadArtifact(rebuilt.status!.artifact!);
    t.after(() => again.cleanup());
    assert.ok((await readTree(again.dir)).includes('vendor/lib/added.yaml'));
  });

  test('deleting the object removes its artifacts from storage', async () => {
    const repo = await server.createRepo(uniqueName('del'));
    await repo.commit({ 'a.yaml': 'a' });
    const name = uniqueName('del');
    await createSource(KIND, namespace, name, { url: repo.url, interval: '10m', ref: { branch: 'main' } });
    await waitForReady(KIND, namespace, name);
    const dir = join(operator.storageRoot, 'gitrepository', namespace, name);
    assert.ok(existsSync(dir));
    const { client } = await testCluster();
    await client.delete({ apiVersion: 'source.mooring.dev/v1', kind: KIND, namespace, name });
    const { eventually } = await import('@mooring/test/harness');
    await eventually('object gone', async () => {
      const gone = await client.getOrUndefined({
        apiVersion: 'source.mooring.dev/v1',
        kind: KIND,
        namespace,
        name,
      });
      return gone === undefined;
    });
    assert.equal(existsSync(dir), false);
  });
});
