// ImageRepository and ImagePolicy end to end: the operator in this process, Debian's docker-registry
// on loopback (anonymous and htpasswd), the real API server.
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { eventually, TestRegistry, testCluster, uniqueName } from '@mooring/test/harness';
import {
  conditionOf,
  createImageObject,
  createSecret,
  dockerConfig,
  eventsOf,
  getImageObject,
  pushTags,
  type RunningOperator,
  requestReconcile,
  startImageOperator,
  waitForReady,
} from './image-fixture.ts';

const USER = 'robot';
const PASSWORD = 's3cret-Pa55word-never-shown';

let namespace: string;
let operator: RunningOperator;
let registry: TestRegistry;
let privateRegistry: TestRegistry;
let tokenRegistry: TestRegistry;

before(async () => {
  const { client } = await testCluster();
  namespace = uniqueName('image-policy');
  await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  [registry, privateRegistry, tokenRegistry] = await Promise.all([
    TestRegistry.start(),
    TestRegistry.start({ htpasswd: { username: USER, password: PASSWORD } }),
    TestRegistry.start({ htpasswd: { username: USER, password: PASSWORD }, token: true }),
  ]);
  operator = await startImageOperator(namespace);
});

after(async () => {
  await operator?.cleanup();
  await Promise.all([registry?.close(), privateRegistry?.close(), tokenRegistry?.close()]);
  const { client } = await testCluster();
  await client.delete({ apiVersion: 'v1', kind: 'Namespace', name: namespace }).catch(() => {});
});

const TAGS = [
  '1.0.0',
  '1.2.0',
  'v1.10.0',
  '2.0.0-rc.1',
  'latest',
  'main-7-aaa',
  'main-12-bbb',
  'main-3-ccc',
  'sha256-x.sig',
];

/** An ImageRepository on the anonymous registry with TAGS pushed; resolves to its name and image. */
async function scannedRepository(tags: readonly string[] = TAGS) {
  const name = uniqueName('repo');
  const image = `${registry.host}/apps/${name}`;
  const digests = await pushTags(registry.host, `apps/${name}`, tags);
  await createImageObject('ImageRepository', namespace, name, { image, interval: '10m', insecure: true });
  return { name, image, digests };
}

describe('ImageRepository', { concurrency: 4 }, () => {
  test('scans every tag but the excluded signatures, stores them on disk and reports the scan', async () => {
    const { name, image } = await scannedRepository();
    const ready = await waitForReady('ImageRepository', namespace, name);
    const status = ready.status as { canonicalImageName: string; lastScanResult: Record<string, unknown> };
    assert.equal(status.canonicalImageName, image);
    assert.equal(status.lastScanResult.tagCount, TAGS.length - 1);
    assert.match(String(status.lastScanResult.revision), /^sha256:[0-9a-f]{64}$/);
    assert.ok(!(status.lastScanResult.latestTags as string[]).includes('sha256-x.sig'));
    assert.match(conditionOf(ready, 'Ready')!.message, /found 8 tags/);
    const dir = join(operator.storageRoot, 'imagerepository', namespace, name);
    assert.deepEqual(await readdir(dir), ['tags.txt']);
  });

  test('a scan that finds the same tags changes nothing; a new tag changes the revision', async () => {
    const { name } = await scannedRepository(['1.0.0']);
    const first = await waitForReady('ImageRepository', namespace, name);
    const before = (first.status as { lastScanResult: { revision: string } }).lastScanResult;
    await requestReconcile('ImageRepository', namespace, name);
    const again = await getImageObject('ImageRepository', namespace, name);
    assert.equal(
      (again.status as { lastScanResult: { revision: string } }).lastScanResult.revision,
      before.revision,
    );
    await pushTags(registry.host, `apps/${name}`, ['1.1.0']);
    await requestReconcile('ImageRepository', namespace, name);
    const after = await waitForReady(
      'ImageRepository',
      namespace,
      name,
      'True',
      (o) => (o.status as { lastScanResult: { tagCount: number } }).lastScanResult.tagCount === 2,
    );
    assert.notEqual(
      (after.status as { lastScanResult: { revision: string } }).lastScanResult.revision,
      before.revision,
    );
  });

  test('scans a registry with basic auth from a dockerconfigjson Secret', async () => {
    const name = uniqueName('private');
    await pushTags(privateRegistry.host, `team/${name}`, ['0.1.0', '0.2.0'], {
      username: USER,
      password: PASSWORD,
    });
    await createSecret(
      namespace,
      `${name}-auth`,
      { '.dockerconfigjson': dockerConfig(privateRegistry.host, USER, PASSWORD) },
      'kubernetes.io/dockerconfigjson',
    );
    await createImageObject('ImageRepository', namespace, name, {
      image: `${privateRegistry.host}/team/${name}`,
      interval: '10m',
      insecure: true,
      secretRef: { name: `${name}-auth` },
    });
    const ready = await waitForReady('ImageRepository', namespace, name);
    assert.equal((ready.status as { lastScanResult: { tagCount: number } }).lastScanResult.tagCount, 2);
  });

  test('scans a registry with bearer-token auth (credentials exchanged at its token server)', async () => {
    const name = uniqueName('token');
    const creds = { username: USER, password: PASSWORD };
    await pushTags(tokenRegistry.host, `team/${name}`, ['1.0.0', '1.0.1', '1.0.2'], creds);
    await createSecret(
      namespace,
      `${name}-auth`,
      { '.dockerconfigjson': dockerConfig(tokenRegistry.host, USER, PASSWORD) },
      'kubernetes.io/dockerconfigjson',
    );
    await createImageObject('ImageRepository', namespace, name, {
      image: `${tokenRegistry.host}/team/${name}`,
      interval: '10m',
      insecure: true,
      secretRef: { name: `${name}-auth` },
    });
    const ready = await waitForReady('ImageRepository', namespace, name);
    assert.equal((ready.status as { lastScanResult: { tagCount: number } }).lastScanResult.tagCount, 3);
  });

  test("follows the registry's Link pagination to the last page", async (t) => {
    // docker-registry 2.8.2 does not paginate tags/list, so a node:http double serves pages of two.
    const all = ['1.0.0', '1.1.0', '1.2.0', '1.3.0', '1.4.0'];
    const pages: string[] = [];
    const double = http.createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      if (url.pathname === '/v2/') return void res.writeHead(200).end('{}');
      pages.push(url.search);
      const last = url.searchParams.get('last');
      const start = last ? all.indexOf(last) + 1 : 0;
      const page = all.slice(start, start + 2);
      const headers: Record<string, string> = { 'Content-Type': 'application/json' };
      if (start + 2 < all.length)
        headers.Link = `</v2/apps/paged/tags/list?n=2&last=${page.at(-1)}>; rel="next"`;
      res.writeHead(200, headers).end(JSON.stringify({ name: 'apps/paged', tags: page }));
    });
    await new Promise<void>((resolve) => double.listen(0, '127.0.0.1', resolve));
    t.after(() => {
      double.closeAllConnections();
      double.close();
    });
    const host = `127.0.0.1:${(double.address() as AddressInfo).port}`;
    const name = uniqueName('paged');
    await createImageObject('ImageRepository', namespace, name, {
      image: `${host}/apps/paged`,
      interval: '10m',
      insecure: true,
    });
    await createImageObject('ImagePolicy', namespace, name, {
      imageRepositoryRef: { name },
      policy: { semver: { range: '*' } },
    });
    const ready = await waitForReady('ImageRepository', namespace, name);
    assert.equal((ready.status as { lastScanResult: { tagCount: number } }).lastScanResult.tagCount, 5);
    assert.equal(pages.length, 3);
    const policy = await waitForReady('ImagePolicy', namespace, name);
    assert.equal((policy.status?.latestRef as { tag: string } | undefined)?.tag, '1.4.0');
  });

  test('wrong registry credentials: Ready False AuthenticationFailed, and the password is in no status or event', async () => {
    const name = uniqueName('badauth');
    const wrong = `${PASSWORD}-wrong`;
    await createSecret(
      namespace,
      `${name}-auth`,
      { '.dockerconfigjson': dockerConfig(privateRegistry.host, USER, wrong) },
      'kubernetes.io/dockerconfigjson',
    );
    await createImageObject('ImageRepository', namespace, name, {
      image: `${privateRegistry.host}/team/app`,
      interval: '10m',
      insecure: true,
      secretRef: { name: `${name}-auth` },
    });
    const failed = await waitForReady('ImageRepository', namespace, name, 'False');
    const ready = conditionOf(failed, 'Ready')!;
    assert.equal(ready.reason, 'AuthenticationFailed');
    assert.match(ready.message, /rejected the credentials/);
    const events = await eventually('an error event', async () => {
      const e = await eventsOf(namespace, name);
      return e.length ? e : undefined;
    });
    const everything = JSON.stringify(failed) + events.join('\n');
    for (const secret of [wrong, Buffer.from(`${USER}:${wrong}`).toString('base64')]) {
      assert.ok(!everything.includes(secret), 'the secret leaked into status or events');
    }
  });

  test('an unreachable registry: Ready False ReadOperationFailed naming the registry', async () => {
    const name = uniqueName('unreachable');
    await createImageObject('ImageRepository', namespace, name, {
      image: '127.0.0.1:1/apps/none',
      interval: '10m',
      insecure: true,
      timeout: '5s',
    });
    const failed = await waitForReady('ImageRepository', namespace, name, 'False');
    assert.equal(conditionOf(failed, 'Ready')!.reason, 'ReadOperationFailed');
    assert.match(conditionOf(failed, 'Ready')!.message, /127\.0\.0\.1:1/);
  });

  test('an invalid exclusion regex stalls with a message naming it', async () => {
    const name = uniqueName('badregex');
    await createImageObject('ImageRepository', namespace, name, {
      image: `${registry.host}/apps/x`,
      interval: '10m',
      insecure: true,
      exclusionList: ['^(open'],
    });
    const stalled = await waitForReady('ImageRepository', namespace, name, 'False');
    assert.equal(conditionOf(stalled, 'Stalled')?.status, 'True');
    assert.match(
      conditionOf(stalled, 'Ready')!.message,
      /exclusionList entry "\^\(open" is not a valid regular expression/,
    );
  });
});

describe('ImagePolicy', { concurrency: 4 }, () => {
  const cases: [string, Record<string, unknown>, string][] = [
    ['semver range, non-semver tags ignored', { policy: { semver: { range: '>=1.0.0 <2.0.0' } } }, 'v1.10.0'],
    [
      'alphabetical with a filter',
      { policy: { alphabetical: { order: 'asc' } }, filterTags: { pattern: '^main-' } },
      'main-7-aaa',
    ],
    [
      'numerical on an extracted build number',
      {
        policy: { numerical: { order: 'asc' } },
        filterTags: { pattern: '^main-(?P<n>\\d+)-', extract: '$n' },
      },
      'main-12-bbb',
    ],
    [
      'numerical descending picks the lowest',
      {
        policy: { numerical: { order: 'desc' } },
        filterTags: { pattern: '^main-(?P<n>\\d+)-', extract: '$n' },
      },
      'main-3-ccc',
    ],
  ];
  for (const [title, spec, want] of cases) {
    test(title, async () => {
      const { name: repo, image } = await scannedRepository();
      const name = uniqueName('policy');
      await createImageObject('ImagePolicy', namespace, name, {
        imageRepositoryRef: { name: repo },
        ...spec,
      });
      const ready = await waitForReady('ImagePolicy', namespace, name);
      assert.deepEqual(ready.status?.latestRef, { name: image, tag: want });
    });
  }

  test('digest reflection Always fills the digest, and a new tag moves latestRef at once with the previous kept', async () => {
    const { name: repo, image, digests } = await scannedRepository(['1.0.0']);
    const name = uniqueName('digest');
    await createImageObject('ImagePolicy', namespace, name, {
      imageRepositoryRef: { name: repo },
      policy: { semver: { range: '^1' } },
      digestReflectionPolicy: 'Always',
      interval: '10m',
    });
    const first = await waitForReady('ImagePolicy', namespace, name);
    assert.deepEqual(first.status?.latestRef, { name: image, tag: '1.0.0', digest: digests['1.0.0'] });
    const more = await pushTags(registry.host, image.slice(registry.host.length + 1), ['1.1.0']);
    // Only the repository is asked to scan: the policy follows from its new scan revision.
    await requestReconcile('ImageRepository', namespace, repo);
    const moved = await waitForReady(
      'ImagePolicy',
      namespace,
      name,
      'True',
      (o) => (o.status?.latestRef as { tag: string } | undefined)?.tag === '1.1.0',
    );
    assert.deepEqual(moved.status?.latestRef, { name: image, tag: '1.1.0', digest: more['1.1.0'] });
    assert.deepEqual(moved.status?.observedPreviousRef, first.status?.latestRef);
  });

  test('an invalid filter pattern stalls with a clear message', async () => {
    const { name: repo } = await scannedRepository(['1.0.0']);
    const name = uniqueName('badfilter');
    await createImageObject('ImagePolicy', namespace, name, {
      imageRepositoryRef: { name: repo },
      policy: { alphabetical: {} },
      filterTags: { pattern: '(?<' },
    });
    // It waits for the first scan (Ready False, DependencyNotReady) before it can judge the pattern.
    const stalled = await waitForReady(
      'ImagePolicy',
      namespace,
      name,
      'False',
      (o) => !!conditionOf(o, 'Stalled'),
    );
    assert.equal(conditionOf(stalled, 'Stalled')?.status, 'True');
    assert.match(
      conditionOf(stalled, 'Ready')!.message,
      /filterTags\.pattern "\(\?<" is not a valid regular expression/,
    );
  });

  test('an unknown ImageRepository: Ready False DependencyNotReady naming it, then Ready once it exists', async () => {
    const repo = uniqueName('later');
    const name = uniqueName('waiting');
    await createImageObject('ImagePolicy', namespace, name, {
      imageRepositoryRef: { name: repo },
      policy: { semver: { range: '*' } },
    });
    const waiting = await waitForReady('ImagePolicy', namespace, name, 'False');
    assert.equal(conditionOf(waiting, 'Ready')!.reason, 'DependencyNotReady');
    assert.match(
      conditionOf(waiting, 'Ready')!.message,
      new RegExp(`ImageRepository ${namespace}/${repo} not found`),
    );
    await pushTags(registry.host, `apps/${repo}`, ['3.0.0']);
    await createImageObject('ImageRepository', namespace, repo, {
      image: `${registry.host}/apps/${repo}`,
      interval: '10m',
      insecure: true,
    });
    const ready = await waitForReady('ImagePolicy', namespace, name);
    assert.equal((ready.status?.latestRef as { tag: string } | undefined)?.tag, '3.0.0');
  });

  test('another namespace may use a repository only when its accessFrom selects that namespace', async (t) => {
    const { client } = await testCluster();
    const allowed = uniqueName('image-allowed');
    const other = uniqueName('image-other');
    await client.create({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: allowed, labels: { team: 'web' } },
    });
    await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: other } });
    // Operators for the two namespaces, sharing the tag storage of the one that scans.
    const readers = await Promise.all(
      [allowed, other].map((ns) => startImageOperator(ns, { storageRoot: operator.storageRoot })),
    );
    t.after(async () => {
      for (const r of readers) await r.stop();
      for (const ns of [allowed, other])
        await client.delete({ apiVersion: 'v1', kind: 'Namespace', name: ns }).catch(() => {});
    });
    const { name: repo } = await scannedRepository(['1.0.0', '1.1.0']);
    const { client: c } = await testCluster();
    await c.mergePatch(
      { apiVersion: 'image.mooring.dev/v1', kind: 'ImageRepository', namespace, name: repo },
      { spec: { accessFrom: { namespaceSelectors: [{ matchLabels: { team: 'web' } }] } } },
    );
    await waitForReady('ImageRepository', namespace, repo);
    const spec = { imageRepositoryRef: { name: repo, namespace }, policy: { semver: { range: '*' } } };
    await createImageObject('ImagePolicy', allowed, 'p', spec);
    await createImageObject('ImagePolicy', other, 'p', spec);
    const ok = await waitForReady('ImagePolicy', allowed, 'p');
    assert.equal((ok.status?.latestRef as { tag: string } | undefined)?.tag, '1.1.0');
    const denied = await waitForReady('ImagePolicy', other, 'p', 'False');
    assert.equal(conditionOf(denied, 'Ready')!.reason, 'AccessDenied');
    assert.match(
      conditionOf(denied, 'Ready')!.message,
      new RegExp(`does not allow access from namespace ${other}`),
    );
  });

  test('a reference to another namespace is refused under --no-cross-namespace-refs', async (t) => {
    const { client } = await testCluster();
    const ns = uniqueName('image-acl');
    await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    const acl = await startImageOperator(ns, { args: ['--no-cross-namespace-refs'] });
    t.after(async () => {
      await acl.cleanup();
      await client.delete({ apiVersion: 'v1', kind: 'Namespace', name: ns }).catch(() => {});
    });
    const name = uniqueName('cross');
    await createImageObject('ImagePolicy', ns, name, {
      imageRepositoryRef: { name: 'any', namespace },
      policy: { semver: { range: '*' } },
    });
    const denied = await waitForReady('ImagePolicy', ns, name, 'False');
    assert.equal(conditionOf(denied, 'Ready')!.reason, 'AccessDenied');
  });
});

test('tags stored on disk survive a restart: a policy created while the operator is down resolves without a new scan', async (t) => {
  const { client } = await testCluster();
  const ns = uniqueName('image-restart');
  await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  const tmpRegistry = await TestRegistry.start();
  let first = await startImageOperator(ns);
  t.after(async () => {
    await first.cleanup();
    await tmpRegistry.close();
    await client.delete({ apiVersion: 'v1', kind: 'Namespace', name: ns }).catch(() => {});
  });
  await pushTags(tmpRegistry.host, 'apps/app', ['1.0.0', '1.3.0']);
  await createImageObject('ImageRepository', ns, 'app', {
    image: `${tmpRegistry.host}/apps/app`,
    interval: '1h',
    insecure: true,
  });
  await waitForReady('ImageRepository', ns, 'app');
  await first.stop();
  await tmpRegistry.close(); // no registry any more: the restarted operator must use what it stored
  await createImageObject('ImagePolicy', ns, 'app', {
    imageRepositoryRef: { name: 'app' },
    policy: { semver: { range: '^1' } },
  });
  first = await startImageOperator(ns, { storageRoot: first.storageRoot });
  const ready = await waitForReady('ImagePolicy', ns, 'app');
  assert.equal((ready.status?.latestRef as { tag: string } | undefined)?.tag, '1.3.0');
  const repo = await getImageObject('ImageRepository', ns, 'app');
  assert.equal(conditionOf(repo, 'Ready')?.status, 'True');
});
