// HelmRepository and HelmChart end to end: the source operator in this process, a chart
// repository served on loopback with basic auth, a real `git http-backend` for a chart kept in Git,
// the real API server. Charts are crafted here (no helm binary needed): a tar.gz laid out as
// `helm package` writes it, listed in an index.yaml with its digest.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ConditionType } from '@mooring/api';
import { packDirectory } from '@mooring/artifact';
import { GitServer, testCluster, uniqueName } from '@mooring/test/harness';
import { parse } from 'yaml';
import {
  conditionOf,
  createSource,
  downloadArtifact,
  getSource,
  type RunningSource,
  sha256,
  startSourceOperator,
  waitForReady,
} from './source-fixture.ts';

const USER = 'charts';
const PASSWORD = 'hunter2-helm';

let namespace: string;
let operator: RunningSource;
let gitServer: GitServer;
let repoServer: http.Server;
let repoUrl: string;
let work: string;
/** Served files: path → bytes. */
const served = new Map<string, Buffer>();
/** The packages by `<name>-<version>`, as served. */
const packages = new Map<string, Buffer>();

async function chartPackage(name: string, version: string): Promise<Buffer> {
  const dir = await mkdtemp(join(work, 'chart-'));
  await mkdir(join(dir, name, 'templates'), { recursive: true });
  await writeFile(join(dir, name, 'Chart.yaml'), `apiVersion: v2\nname: ${name}\nversion: ${version}\n`);
  await writeFile(join(dir, name, 'values.yaml'), `replicas: 1\n`);
  await writeFile(
    join(dir, name, 'templates', 'cm.yaml'),
    'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n',
  );
  await packDirectory(dir, join(work, `${name}-${version}.tgz`));
  return readFile(join(work, `${name}-${version}.tgz`));
}

async function buildRepository(): Promise<void> {
  const entries: Record<string, unknown[]> = {};
  for (const [name, version] of [
    ['tiny', '1.0.0'],
    ['tiny', '1.2.0'],
    ['tiny', '2.0.0'],
    ['broken', '0.1.0'],
  ] as const) {
    const tgz = await chartPackage(name, version);
    packages.set(`${name}-${version}`, tgz);
    served.set(`/charts/${name}-${version}.tgz`, tgz);
    const digest = name === 'broken' ? 'f'.repeat(64) : createHash('sha256').update(tgz).digest('hex');
    entries[name] ??= [];
    entries[name].push({
      apiVersion: 'v2',
      name,
      version,
      // Relative, as `helm repo index` writes them: resolved against the repository URL.
      urls: [`charts/${name}-${version}.tgz`],
      digest,
    });
  }
  const index = `apiVersion: v1\nentries: ${JSON.stringify(entries)}\ngenerated: "2026-01-01T00:00:00Z"\n`;
  served.set('/index.yaml', Buffer.from(index));
}

before(async () => {
  const { client } = await testCluster();
  namespace = uniqueName('source-helm');
  await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  work = await mkdtemp(join(tmpdir(), 'mooring-helm-test-'));
  await buildRepository();
  const expected = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;
  repoServer = http.createServer((req, res) => {
    if (req.headers.authorization !== expected) {
      res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="charts"' }).end();
      return;
    }
    const body = served.get(new URL(req.url ?? '/', 'http://x').pathname);
    if (!body) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'Content-Length': body.length }).end(body);
  });
  await new Promise<void>((r) => repoServer.listen(0, '127.0.0.1', r));
  repoUrl = `http://127.0.0.1:${(repoServer.address() as AddressInfo).port}`;
  gitServer = await GitServer.start();
  operator = await startSourceOperator(namespace);
  for (const [name, password] of [
    ['repo-good', PASSWORD],
    ['repo-bad', 'wrong'],
  ] as const) {
    await client.create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name, namespace },
      stringData: { username: USER, password },
    } as never);
  }
});

after(async () => {
  await operator?.stop();
  await gitServer?.close();
  await new Promise((r) => repoServer?.close(r));
  if (work) await rm(work, { recursive: true, force: true });
  const { client } = await testCluster();
  await client.delete({ apiVersion: 'v1', kind: 'Namespace', name: namespace }).catch(() => {});
});

/** One HelmRepository with the good credentials, shared by the chart tests. */
let sharedRepo: Promise<string> | undefined;
function goodRepository(): Promise<string> {
  sharedRepo ??= (async () => {
    const name = uniqueName('charts');
    await createSource('HelmRepository', namespace, name, {
      url: repoUrl,
      interval: '10m',
      secretRef: { name: 'repo-good' },
    });
    await waitForReady('HelmRepository', namespace, name);
    return name;
  })();
  return sharedRepo;
}

describe('HelmRepository and HelmChart', { concurrency: 4 }, () => {
  test('the index is fetched with basic auth, normalised and stored; its sha256 is the revision', async (t) => {
    const name = await goodRepository();
    const ready = await getSource('HelmRepository', namespace, name);
    const artifact = ready.status!.artifact!;
    assert.match(artifact.revision, /^sha256:[0-9a-f]{64}$/);
    assert.equal(ready.status?.url, artifact.url);
    assert.equal(conditionOf(ready, ConditionType.ArtifactInStorage)?.status, 'True');
    const fetched = await downloadArtifact(artifact);
    t.after(() => fetched.cleanup());
    const text = readFileSync(join(fetched.dir, 'index.yaml'));
    assert.equal(`sha256:${sha256(text)}`, artifact.revision);
    const index = parse(text.toString()) as { entries: Record<string, { version: string }[]> };
    assert.deepEqual(Object.keys(index.entries), ['broken', 'tiny']);
    assert.deepEqual(
      index.entries.tiny!.map((v) => v.version),
      ['2.0.0', '1.2.0', '1.0.0'],
    );
  });

  test('bad credentials leave the repository not Ready, the message naming the Secret', async () => {
    const name = uniqueName('charts-bad');
    await createSource('HelmRepository', namespace, name, {
      url: repoUrl,
      interval: '10m',
      secretRef: { name: 'repo-bad' },
    });
    const failed = await waitForReady('HelmRepository', namespace, name, 'False');
    const ready = conditionOf(failed, 'Ready')!;
    assert.equal(ready.reason, 'AuthenticationFailed');
    assert.match(ready.message, /401/);
    assert.match(ready.message, new RegExp(`Secret ${namespace}/repo-bad`));
    assert.doesNotMatch(JSON.stringify(failed.status), /wrong/);
    assert.equal(failed.status?.artifact, undefined);
  });

  test('a version range picks the highest match, downloaded as the index lists it', async (t) => {
    const repo = await goodRepository();
    const name = uniqueName('tiny');
    await createSource('HelmChart', namespace, name, {
      chart: 'tiny',
      version: '>=1.0.0 <2.0.0',
      sourceRef: { kind: 'HelmRepository', name: repo },
      interval: '10m',
    });
    const ready = await waitForReady('HelmChart', namespace, name);
    const artifact = ready.status!.artifact!;
    assert.equal(artifact.revision, '1.2.0');
    assert.equal(ready.status?.observedChartName, 'tiny');
    const repository = await getSource('HelmRepository', namespace, repo);
    assert.equal(ready.status?.observedSourceArtifactRevision, repository.status?.artifact?.revision);
    // Stored as served: the artifact is the package's bytes.
    assert.equal(artifact.digest, `sha256:${sha256(packages.get('tiny-1.2.0')!)}`);
    const fetched = await downloadArtifact(artifact);
    t.after(() => fetched.cleanup());
    assert.match(readFileSync(join(fetched.dir, 'tiny', 'Chart.yaml'), 'utf8'), /version: 1\.2\.0/);
  });

  test('a package whose digest is not the one in the index is refused', async () => {
    const repo = await goodRepository();
    const name = uniqueName('broken');
    await createSource('HelmChart', namespace, name, {
      chart: 'broken',
      sourceRef: { kind: 'HelmRepository', name: repo },
      interval: '10m',
    });
    const failed = await waitForReady('HelmChart', namespace, name, 'False');
    const ready = conditionOf(failed, 'Ready')!;
    assert.equal(ready.reason, 'ChartPullFailed');
    assert.match(ready.message, new RegExp(`the index says sha256:${'f'.repeat(64)}`));
    assert.equal(failed.status?.artifact, undefined);
  });

  test('a chart folder in a GitRepository is packaged, file:// dependencies vendored, values files merged, revision carrying the commit', async (t) => {
    const git = await gitServer.createRepo(uniqueName('charts-git'));
    const commit = await git.commit({
      'charts/app/Chart.yaml':
        'apiVersion: v2\nname: app\nversion: 0.3.0\ndependencies:\n  - {name: lib, version: 0.1.x, repository: "file://../lib"}\n',
      'charts/lib/Chart.yaml': 'apiVersion: v2\nname: lib\nversion: 0.1.4\ntype: library\n',
      'charts/app/values.yaml': 'replicas: 1\nimage: {tag: "1.0"}\n',
      'charts/app/templates/cm.yaml': 'kind: ConfigMap\n',
      'env/prod.yaml': 'image: {tag: "2.0"}\n',
      'README.md': '# charts',
    });
    const source = uniqueName('charts-git');
    await createSource('GitRepository', namespace, source, {
      url: git.url,
      interval: '10m',
      ref: { branch: 'main' },
    });
    const name = uniqueName('app');
    await createSource('HelmChart', namespace, name, {
      chart: './charts/app',
      sourceRef: { kind: 'GitRepository', name: source },
      reconcileStrategy: 'Revision',
      valuesFiles: ['charts/app/values.yaml', 'env/prod.yaml'],
      interval: '10m',
    });
    const ready = await waitForReady('HelmChart', namespace, name);
    const artifact = ready.status!.artifact!;
    assert.equal(artifact.revision, `0.3.0+${commit.slice(0, 12)}`);
    assert.equal(ready.status?.observedSourceArtifactRevision, `main@sha1:${commit}`);
    assert.deepEqual(ready.status?.observedValuesFiles, ['charts/app/values.yaml', 'env/prod.yaml']);
    const fetched = await downloadArtifact(artifact);
    t.after(() => fetched.cleanup());
    assert.equal(
      (parse(readFileSync(join(fetched.dir, 'app', 'Chart.yaml'), 'utf8')) as { version: string }).version,
      `0.3.0+${commit.slice(0, 12)}`,
    );
    assert.deepEqual(parse(readFileSync(join(fetched.dir, 'app', 'values.yaml'), 'utf8')), {
      replicas: 1,
      image: { tag: '2.0' },
    });
    assert.equal(readFileSync(join(fetched.dir, 'app', 'templates', 'cm.yaml'), 'utf8'), 'kind: ConfigMap\n');
    // The file:// dependency is vendored into charts/, as Flux's dependency manager does.
    assert.match(
      readFileSync(join(fetched.dir, 'app', 'charts', 'lib', 'Chart.yaml'), 'utf8'),
      /version: 0\.1\.4/,
    );
  });

  test('a new version in the index is a new revision, and the chart follows it through the watch', async (t) => {
    // A repository of its own under /grow, so the shared index stays as the other tests read it.
    const indexOf = (versions: string[]) =>
      `apiVersion: v1\nentries:\n  tiny:\n${versions
        .map((v) => {
          const tgz = packages.get(`tiny-${v}`)!;
          served.set(`/grow/charts/tiny-${v}.tgz`, tgz);
          return `    - {name: tiny, version: ${v}, urls: [charts/tiny-${v}.tgz], digest: ${sha256(tgz)}}\n`;
        })
        .join('')}`;
    served.set('/grow/index.yaml', Buffer.from(indexOf(['1.0.0'])));
    const repo = uniqueName('grow');
    await createSource('HelmRepository', namespace, repo, {
      url: `${repoUrl}/grow`,
      interval: '1s',
      secretRef: { name: 'repo-good' },
    });
    const first = await waitForReady('HelmRepository', namespace, repo);
    const name = uniqueName('grow');
    await createSource('HelmChart', namespace, name, {
      chart: 'tiny',
      sourceRef: { kind: 'HelmRepository', name: repo },
      interval: '10m',
    });
    const before = await waitForReady('HelmChart', namespace, name);
    assert.equal(before.status?.artifact?.revision, '1.0.0');
    // The same index again (another order of nothing): the stored artifact stays.
    await new Promise((r) => setTimeout(r, 1_500));
    const same = await getSource('HelmRepository', namespace, repo);
    assert.equal(same.status?.artifact?.revision, first.status?.artifact?.revision);
    served.set('/grow/index.yaml', Buffer.from(indexOf(['1.0.0', '1.2.0'])));
    t.after(() => served.delete('/grow/index.yaml'));
    await waitForReady(
      'HelmRepository',
      namespace,
      repo,
      'True',
      (o) => o.status?.artifact?.revision !== first.status?.artifact?.revision,
    );
    // The chart's interval is 10m: only the watch on its repository brings the new version this soon.
    const after = await waitForReady(
      'HelmChart',
      namespace,
      name,
      'True',
      (o) => o.status?.artifact?.revision === '1.2.0',
    );
    assert.equal(after.status?.artifact?.digest, `sha256:${sha256(packages.get('tiny-1.2.0')!)}`);
  });

  test('an OCI HelmRepository is checked and Ready, with no artifact', async () => {
    const name = uniqueName('oci-charts');
    await createSource('HelmRepository', namespace, name, {
      type: 'oci',
      url: 'oci://registry.example/charts',
      interval: '10m',
    });
    const ready = await waitForReady('HelmRepository', namespace, name);
    assert.equal(conditionOf(ready, 'Ready')?.message, 'Helm repository is ready');
    assert.equal(ready.status?.artifact, undefined);
  });

  test('signature verification is refused: Stalled, UnsupportedConfiguration', async () => {
    const repo = await goodRepository();
    const name = uniqueName('verify');
    await createSource('HelmChart', namespace, name, {
      chart: 'tiny',
      sourceRef: { kind: 'HelmRepository', name: repo },
      verify: { provider: 'cosign' },
      interval: '10m',
    });
    const failed = await waitForReady('HelmChart', namespace, name, 'False');
    assert.equal(conditionOf(failed, 'Stalled')?.status, 'True');
    assert.equal(conditionOf(failed, 'Ready')?.reason, 'UnsupportedConfiguration');
    assert.match(conditionOf(failed, 'Ready')!.message, /not supported yet/);
  });
});
