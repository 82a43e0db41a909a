// Each step of a HelmChart's reconcile (./index.ts) that needs no storage on its own, through its
// real signature: the API server is the in-memory fake of test/simulation/fake-api-server.ts, the
// source's artifact a folder written here. The integration test
// operators/source/test/helm-sources.test.ts runs the whole list against the real API server.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, test } from 'node:test';
import { ConditionType, type HelmChart, type HelmRepository, Reason, SOURCE_API_VERSION } from '@mooring/api';
import { FakeClock, KubeClient, type KubeObject, RetryableError, StalledError } from '@mooring/runtime';
import { stepContext } from '@mooring/test/harness/step-context';
import { FakeApiServer, FakeApiTransport } from '../../../../../test/simulation/fake-api-server.ts';
import { FakeArtifactStorage } from '../../../test/fake-artifact-storage.ts';
import type { HelmChartRun } from '../../helm-chart-run.ts';
import { storageRefOf } from '../../source-run.ts';
import { keepCurrentArtifact } from '../artifact.ts';
import { resolveChart, revisionSuffix } from './resolve-chart.ts';
import { resolveSource } from './resolve-source.ts';
import { sameInputs } from './up-to-date.ts';
import { validateSpec } from './validate-spec.ts';

const NS = 'team';
const COMMIT = '0123456789abcdef0123456789abcdef01234567';
const temps: string[] = [];
afterEach(async () => {
  for (const dir of temps.splice(0)) await rm(dir, { recursive: true, force: true });
});

const artifact = (revision: string) => ({
  path: 'x/team/src/0.tar.gz',
  url: 'http://s/x',
  digest: `sha256:${'a'.repeat(64)}`,
  revision,
  lastUpdateTime: '2026-01-01T00:00:00Z',
});

async function world() {
  const clock = new FakeClock(Date.UTC(2026, 0, 1));
  const server = new FakeApiServer({ now: () => clock.now() });
  const client = new KubeClient(new FakeApiTransport(server), { qps: 1e9, burst: 1e9, userAgent: 't' });
  const storage = new FakeArtifactStorage();
  const put = async (obj: KubeObject) => {
    await client.apply(obj, { fieldManager: 'kubectl', force: true });
  };
  await put({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  const runOf = (spec: Partial<HelmChart['spec']> = {}, initial: HelmChart['status'] = {}) => {
    const obj: HelmChart = {
      apiVersion: SOURCE_API_VERSION,
      kind: 'HelmChart',
      metadata: { name: 'app', namespace: NS },
      spec: {
        chart: 'tiny',
        sourceRef: { kind: 'HelmRepository', name: 'charts' },
        interval: '10m',
        ...spec,
      },
    };
    const status: NonNullable<HelmChart['status']> = structuredClone(initial);
    const { ctx } = stepContext(status, () => clock.now());
    const run: HelmChartRun = {
      obj,
      ctx,
      deps: {
        client,
        storage: storage.asStorage,
        limits: {
          maxChartBytes: 1 << 20,
          maxIndexBytes: 1 << 20,
          maxFileBytes: 1 << 20,
          maxTotalBytes: 1 << 24,
        },
      },
      status,
      storage: storage.asStorage,
      storageRef: storageRefOf('HelmChart', obj),
      timeoutMs: 10_000,
    };
    return run;
  };
  return { put, runOf };
}

/** A folder standing for the extracted source artifact. */
async function sourceTree(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'mooring-helmchart-unit-'));
  temps.push(dir);
  for (const [path, text] of Object.entries(files)) {
    await mkdir(join(dir, path, '..'), { recursive: true });
    await writeFile(join(dir, path), text);
  }
  return dir;
}

test('validate spec: verify, a bad range, a chart name with a slash, a path out of the source stall', async () => {
  const w = await world();
  for (const [spec, reason, message] of [
    [
      { verify: { provider: 'cosign' } },
      Reason.UnsupportedConfiguration,
      /signature verification \(cosign\) is not supported yet/,
    ],
    [{ version: '>= one' }, Reason.InvalidSpec, /version '>= one' is not a SemVer range/],
    [{ chart: 'org/tiny' }, Reason.InvalidSpec, /is not a chart name/],
    [
      { chart: '../up', sourceRef: { kind: 'GitRepository', name: 'g' } },
      Reason.InvalidPath,
      /leaves the source/,
    ],
    [
      { chart: 'c', valuesFiles: ['../../etc/x'], sourceRef: { kind: 'GitRepository', name: 'g' } },
      Reason.InvalidPath,
      /values file '..\/..\/etc\/x' leaves the source/,
    ],
  ] as const) {
    const run = w.runOf(spec as Partial<HelmChart['spec']>);
    assert.throws(
      () => validateSpec(run),
      (err: unknown) => err instanceof StalledError && err.reason === reason && message.test(err.message),
    );
  }
  validateSpec(w.runOf({ version: '>=1.0.0 <2.0.0' }));
});

test('resolve source: a missing source and one without an artifact wait; an OCI HelmRepository stalls', async () => {
  const w = await world();
  await assert.rejects(
    resolveSource(w.runOf()),
    (err: unknown) =>
      err instanceof RetryableError && err.message === `HelmRepository ${NS}/charts not found`,
  );
  const repo: HelmRepository = {
    apiVersion: SOURCE_API_VERSION,
    kind: 'HelmRepository',
    metadata: { name: 'charts', namespace: NS },
    spec: { url: 'https://charts.example' },
  };
  await w.put(repo as KubeObject);
  await assert.rejects(
    resolveSource(w.runOf()),
    (err: unknown) =>
      err instanceof RetryableError &&
      err.reason === Reason.DependencyNotReady &&
      /has no artifact yet/.test(err.message),
  );
  await w.put({
    ...repo,
    metadata: { name: 'oci', namespace: NS },
    spec: { type: 'oci', url: 'oci://r.example/c' },
  } as KubeObject);
  await assert.rejects(
    resolveSource(w.runOf({ sourceRef: { kind: 'HelmRepository', name: 'oci' } })),
    (err: unknown) => err instanceof StalledError && err.reason === Reason.UnsupportedConfiguration,
  );
});

test('resolve chart: the index picks the highest version in range; a Git folder gives its Chart.yaml version, +commit with Revision', async () => {
  const w = await world();
  const index = await sourceTree({
    'index.yaml':
      'apiVersion: v1\nentries:\n  tiny:\n    - {name: tiny, version: 1.0.0, urls: [a]}\n    - {name: tiny, version: 1.5.0, urls: [b]}\n    - {name: tiny, version: 2.0.0, urls: [c]}\n',
  });
  const fromRepo = w.runOf({ version: '<2' });
  fromRepo.source = { kind: 'HelmRepository', name: 'charts', artifact: artifact('sha256:1') };
  fromRepo.chart = { name: '', version: '', sourceDir: index };
  await resolveChart(fromRepo);
  assert.equal(fromRepo.revision, '1.5.0');
  assert.deepEqual(fromRepo.chart?.entry?.urls, ['b']);

  const none = w.runOf({ version: '>=3' });
  none.source = fromRepo.source;
  none.chart = { name: '', version: '', sourceDir: index };
  await assert.rejects(
    resolveChart(none),
    /HelmRepository charts: no version of chart 'tiny' satisfies '>=3'/,
  );
  assert.equal(
    none.status.conditions?.find((c) => c.type === ConditionType.FetchFailed)?.reason,
    Reason.ChartPullFailed,
  );

  const tree = await sourceTree({ 'charts/app/Chart.yaml': 'apiVersion: v2\nname: app\nversion: 0.3.0\n' });
  for (const [strategy, revision] of [
    [undefined, '0.3.0'],
    ['Revision', `0.3.0+${COMMIT.slice(0, 12)}`],
  ] as const) {
    const git = w.runOf({
      chart: './charts/app',
      sourceRef: { kind: 'GitRepository', name: 'g' },
      reconcileStrategy: strategy,
    });
    git.source = { kind: 'GitRepository', name: 'g', artifact: artifact(`main@sha1:${COMMIT}`) };
    git.chart = { name: '', version: '', sourceDir: tree };
    await resolveChart(git);
    assert.equal(git.revision, revision);
    assert.equal(git.chart?.name, 'app');
  }
  assert.equal(revisionSuffix(`v1@sha256:${'b'.repeat(64)}`), 'b'.repeat(12));

  const missing = w.runOf({ chart: 'charts/none', sourceRef: { kind: 'GitRepository', name: 'g' } });
  missing.source = { kind: 'GitRepository', name: 'g', artifact: artifact(`main@sha1:${COMMIT}`) };
  missing.chart = { name: '', version: '', sourceDir: tree };
  await assert.rejects(
    resolveChart(missing),
    (err: unknown) =>
      err instanceof RetryableError &&
      err.reason === Reason.ChartPackageFailed &&
      /no Chart.yaml in charts\/none/.test(err.message),
  );
});

test('keep current artifact: the same version, chart and values files keep the stored package', async () => {
  const w = await world();
  const stored = { ...artifact('1.5.0'), path: 'helmchart/team/app/1.tar.gz' };
  const status = { artifact: stored, observedChartName: 'tiny', observedValuesFiles: ['v.yaml'] };
  const same = w.runOf({ valuesFiles: ['v.yaml'] }, structuredClone(status));
  same.chart = { name: 'tiny', version: '1.5.0' };
  same.revision = '1.5.0';
  keepCurrentArtifact(sameInputs)(same);
  assert.equal(same.upToDate, true);
  const cases: [Partial<HelmChart['spec']>, string][] = [
    [{ valuesFiles: ['v.yaml', 'prod.yaml'] }, '1.5.0'],
    [{ valuesFiles: ['v.yaml'] }, '1.6.0'],
  ];
  for (const [spec, revision] of cases) {
    const changed = w.runOf(spec, structuredClone(status));
    changed.chart = { name: 'tiny', version: revision };
    changed.revision = revision;
    keepCurrentArtifact(sameInputs)(changed);
    assert.equal(changed.upToDate, undefined, JSON.stringify(spec));
    assert.equal(
      changed.status.conditions?.find((c) => c.type === ConditionType.ArtifactOutdated)?.status,
      'True',
    );
  }
});
